package dev.sluice.embedded;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class EmbeddedPostgresServerTest {

    @Test
    void startsDurableOnLoopbackAndKeepsDataAcrossRestarts(@TempDir Path dir) throws Exception {
        Path data = dir.resolve("data");
        try (EmbeddedPostgresServer pg = EmbeddedPostgresServer.start(data)) {
            assertThat(pg.setting("fsync")).isEqualTo("on");
            assertThat(pg.setting("synchronous_commit")).isEqualTo("on");
            assertThat(pg.setting("listen_addresses")).isEqualTo("localhost");
            assertThat(pg.setting("server_version_num")).startsWith("17");
            try (Connection c = pg.dataSource().getConnection(); Statement s = c.createStatement()) {
                s.execute("CREATE TABLE kept (v int)");
                s.execute("INSERT INTO kept VALUES (42)");
            }
        }
        assertThat(Files.exists(data.resolve("PG_VERSION"))).isTrue();
        try (EmbeddedPostgresServer pg = EmbeddedPostgresServer.start(data);
             Connection c = pg.dataSource().getConnection();
             Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT v FROM kept")) {
            assertThat(rs.next()).isTrue();
            assertThat(rs.getInt(1)).isEqualTo(42);
        }
    }

    @Test
    void temporaryServerDeletesItsDataDirectory() {
        Path data;
        try (EmbeddedPostgresServer pg = EmbeddedPostgresServer.startTemporary()) {
            data = pg.dataDirectory();
            assertThat(pg.temporary()).isTrue();
            assertThat(Files.exists(data.resolve("PG_VERSION"))).isTrue();
        }
        assertThat(Files.exists(data)).isFalse();
    }
}
