package dev.sluice.maint;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.ErrorCode;
import dev.sluice.GroupConfig;
import dev.sluice.Sluice;
import dev.sluice.SluiceException;
import dev.sluice.StreamConfig;
import dev.sluice.embedded.test.SluiceTest;
import dev.sluice.embedded.test.TestDatabase;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

/** The janitor's settings: validated with INVALID_CONFIG, stored in the config documents, defaulted for older ones. */
@SluiceTest
class JanitorConfigTest {

    private static void invalid(Executable build, String field) {
        assertThatThrownBy(build::execute).isInstanceOfSatisfying(SluiceException.class, e -> {
            assertThat(e.code()).isEqualTo(ErrorCode.INVALID_CONFIG);
            assertThat(e.getMessage()).contains(field);
        });
    }

    @Test
    void zeroAndNegativeRetentionsAndTtlsAreRefused() {
        for (Duration bad : List.of(Duration.ZERO, Duration.ofSeconds(-1), Duration.ofDays(-7))) {
            invalid(() -> StreamConfig.builder().retention(bad).build(), "retention");
            invalid(() -> StreamConfig.builder().deliveryLogRetention(bad).build(), "deliveryLogRetention");
            invalid(() -> StreamConfig.builder().idempotencyKeyTtl(bad).build(), "idempotencyKeyTtl");
            invalid(() -> StreamConfig.builder().emptyCompactionHeadTtl(bad).build(), "emptyCompactionHeadTtl");
            invalid(() -> GroupConfig.builder().deadLetterRetention(bad).build(), "deadLetterRetention");
        }
        invalid(() -> GroupConfig.builder().deadLetterRetention(Duration.ofSeconds(Long.MAX_VALUE)).build(), "deadLetterRetention");
        assertThat(StreamConfig.defaults().deliveryLogRetention()).isEqualTo(Duration.ofDays(7));
        assertThat(GroupConfig.defaults().deadLetterRetention()).isEqualTo(Duration.ofDays(14));
        StreamConfig c = StreamConfig.builder().deliveryLogRetention(Duration.ofDays(3)).build();
        assertThat(c.toBuilder().build()).isEqualTo(c);
    }

    @Test
    void storedDocumentsKeepTheSettingsAndOlderDocumentsReadTheDefaults(TestDatabase db) {
        try (JanitorFixture fx = new JanitorFixture(db); Sluice sluice = fx.client()) {
            long id = sluice.stream("docs").register(StreamConfig.builder().deliveryLogRetention(Duration.ofDays(3)).build()).id();
            assertThat(sluice.stream("docs").get().orElseThrow().config().deliveryLogRetention()).isEqualTo(Duration.ofDays(3));
            assertThat(fx.strings("SELECT config ->> 'delivery_log_retention' FROM " + fx.q + ".stream_config WHERE id = ?", id))
                    .containsExactly("PT72H");
            sluice.stream("docs").consumerGroup("kept").register(GroupConfig.builder().deadLetterRetention(Duration.ofDays(3)).build());
            sluice.stream("docs").consumerGroup("plain").register(GroupConfig.defaults());
            assertThat(sluice.stream("docs").consumerGroup("kept").get().orElseThrow().config().deadLetterRetention())
                    .isEqualTo(Duration.ofDays(3));
            assertThat(fx.strings("SELECT config::text FROM " + fx.q + ".consumer_group_config WHERE name = 'plain'"))
                    .as("a default is not written into the sparse group document").containsExactly("{}");

            // Documents stored before these settings existed have no such keys.
            db.execute("UPDATE " + fx.q + ".stream_config SET config = config - 'delivery_log_retention'");
            db.execute("UPDATE " + fx.q + ".consumer_group_config SET config = config - 'dead_letter_retention'");
            assertThat(sluice.stream("docs").get().orElseThrow().config().deliveryLogRetention()).isEqualTo(Duration.ofDays(7));
            assertThat(sluice.stream("docs").consumerGroup("kept").get().orElseThrow().config().deadLetterRetention())
                    .isEqualTo(Duration.ofDays(14));
            // Declaring again writes the setting back; an unchanged declaration stays unchanged.
            sluice.stream("docs").register(StreamConfig.builder().deliveryLogRetention(Duration.ofDays(3)).build());
            assertThat(sluice.stream("docs").get().orElseThrow().config().deliveryLogRetention()).isEqualTo(Duration.ofDays(3));
        }
    }
}
