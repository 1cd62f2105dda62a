package dev.sluice.embedded;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.embedded.test.SluiceTest;
import dev.sluice.embedded.test.TestDatabase;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
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
    void theTestServerStillWantsItsPasswordOverScramWithOneIterationOnly(TestDatabase db) throws Exception {
        if (db.external()) {
            return; // the kit re-hashes only its own embedded server's password
        }
        try (Connection c = db.connect();
             PreparedStatement ps = c.prepareStatement("SELECT rolpassword FROM pg_authid WHERE rolname = current_user");
             ResultSet rs = ps.executeQuery()) {
            rs.next();
            assertThat(rs.getString(1)).startsWith("SCRAM-SHA-256$1:");
        }
        try (Connection c = db.connect();
             PreparedStatement ps = c.prepareStatement("SELECT DISTINCT auth_method FROM pg_hba_file_rules");
             ResultSet rs = ps.executeQuery()) {
            rs.next();
            assertThat(rs.getString(1)).isEqualTo("scram-sha-256");
            assertThat(rs.next()).isFalse();
        }
        String wrong = db.jdbcUrl().replaceFirst("password=[^&]*", "password=not-the-secret");
        assertThatThrownBy(() -> DriverManager.getConnection(wrong).close())
                .isInstanceOfSatisfying(SQLException.class, e -> assertThat(e.getSQLState()).isEqualTo("28P01"));
    }

    @Test
    void reservesExtraSchemaNames(TestDatabase db) {
        String a = db.freshSchemaName("extra");
        String b = db.freshSchemaName("extra");
        assertThat(a).isNotEqualTo(b).startsWith("t_extra_");
    }
}
