package dev.sluice.internal.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.embedded.test.SluiceTest;
import dev.sluice.embedded.test.TestDatabase;
import java.sql.Connection;
import java.sql.Types;
import java.time.Instant;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;

@SluiceTest
class SqlTest {

    @Test
    void bindsEachSupportedTypeAndMapsRows(TestDatabase db) throws Exception {
        UUID id = UUID.randomUUID();
        Instant at = Instant.parse("2026-01-02T03:04:05.123456Z");
        try (Connection c = db.connect()) {
            String row = Sql.first(c, "SELECT ?::bigint || '|' || ?::int || '|' || ? || '|' || ?::boolean || '|' || ?::float8"
                    + " || '|' || ?::uuid || '|' || encode(?::bytea, 'hex') || '|' || (?::timestamptz = '2026-01-02T03:04:05.123456Z')"
                    + " || '|' || array_to_string(?::bigint[], ',') || '|' || coalesce(?::text, 'null')",
                    rs -> rs.getString(1), 7L, 8, "s", true, 1.5, id, new byte[] {1, 2}, at,
                    Sql.array("int8", List.of(3L, 4L)), new Sql.Null(Types.VARCHAR)).orElseThrow();
            assertThat(row).isEqualTo("7|8|s|true|1.5|" + id + "|0102|true|3,4|null");
            assertThat(Sql.list(c, "SELECT g FROM generate_series(1, ?) g", rs -> rs.getInt(1), 3)).containsExactly(1, 2, 3);
            assertThat(Sql.first(c, "SELECT 1 WHERE false", rs -> rs.getInt(1))).isEmpty();
            assertThat(Sql.scalar(c, "SELECT count(*) FROM generate_series(1, ?)", 5)).isEqualTo(5);
            assertThat(Sql.update(c, "CREATE TEMP TABLE t AS SELECT g FROM generate_series(1, ?) g", 4)).isEqualTo(4);
            assertThat(Sql.update(c, "DELETE FROM t WHERE g = ANY(?)", Sql.array("int4", new Integer[] {1, 2}))).isEqualTo(2);
        }
    }

    @Test
    void refusesABareNullAndUnknownTypes(TestDatabase db) throws Exception {
        try (Connection c = db.connect()) {
            assertThatThrownBy(() -> Sql.scalar(c, "SELECT ?::int", (Object) null))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("bare null");
            assertThatThrownBy(() -> Sql.scalar(c, "SELECT 1 WHERE ? IS NOT NULL", new StringBuilder("x")))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("unsupported type");
        }
    }
}
