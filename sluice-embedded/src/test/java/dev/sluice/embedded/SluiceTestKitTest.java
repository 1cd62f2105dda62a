package dev.sluice.embedded;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.embedded.test.SluiceTest;
import dev.sluice.embedded.test.TestDatabase;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import org.junit.jupiter.api.Test;

@SluiceTest
class SluiceTestKitTest {

    @Test
    void givesTheClassAFreshEmptySchema(TestDatabase db) throws Exception {
        assertThat(db.schema()).startsWith("t_sluicetestkittest_");
        try (Connection c = db.connect();
             PreparedStatement ps = c.prepareStatement(
                     "SELECT count(*) FROM pg_class k JOIN pg_namespace n ON n.oid = k.relnamespace WHERE n.nspname = ?")) {
            ps.setString(1, db.schema());
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                assertThat(rs.getInt(1)).isZero();
            }
        }
    }

    @Test
    void reservesExtraSchemaNames(TestDatabase db) {
        String a = db.freshSchemaName("extra");
        String b = db.freshSchemaName("extra");
        assertThat(a).isNotEqualTo(b).startsWith("t_extra_");
    }
}
