package dev.sluice.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.ConcurrencyPolicy;
import dev.sluice.ErrorCode;
import dev.sluice.GroupConfig;
import dev.sluice.GroupInfo;
import dev.sluice.RetryPolicy;
import dev.sluice.Sluice;
import dev.sluice.SluiceException;
import dev.sluice.StreamConfig;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/**
 * What {@code register} does to streams and groups that exist: the annotation's fields are declared, the others keep
 * their stored values, an unchanged declaration writes nothing, and {@code register = "false"} needs the group.
 */
class GroupDeclarationTest {
    static final String SCHEMA = TestDb.freshSchema("declare");

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(DataSourceAutoConfiguration.class, SluiceAutoConfiguration.class,
                    SluiceListenerAutoConfiguration.class))
            .withPropertyValues(TestDb.properties(SCHEMA)).withPropertyValues("sluice.maintenance.enabled=false");

    static class Declares {
        @SluiceListener(stream = "declared", group = "g", bindings = "b.*", maxAttempts = "7", concurrencyPolicy = "ordered")
        void handle(String text) {
        }
    }

    static class NeedsTheGroup {
        @SluiceListener(stream = "declared", group = "missing", register = "false")
        void handle(String text) {
        }
    }

    @Test
    void theAnnotationsFieldsAreDeclaredAndTheOthersKept() {
        try (Sluice s = Sluice.builder().jdbcUrl(TestDb.url()).schema(SCHEMA).maintenance(false).build()) {
            s.stream("declared").register(StreamConfig.defaults());
            s.stream("declared").consumerGroup("g").register(GroupConfig.builder().bindings("a.*")
                    .retry(RetryPolicy.DEFAULT.withMaxAttempts(3)).deadLetterRetention(Duration.ofDays(3)).build());
            long streamId = s.stream("declared").get().orElseThrow().id();

            runner.withBean(Declares.class).run(ctx -> assertThat(ctx).hasNotFailed());
            GroupInfo g = s.stream("declared").consumerGroup("g").get().orElseThrow();
            assertThat(g.config().bindings()).isEqualTo(List.of("b.*"));
            assertThat(g.config().retry().maxAttempts()).isEqualTo(7);
            assertThat(g.config().retry().initialBackoff()).isEqualTo(RetryPolicy.DEFAULT.initialBackoff());
            assertThat(g.config().concurrency()).isEqualTo(ConcurrencyPolicy.ORDERED);
            assertThat(g.config().deadLetterRetention()).isEqualTo(Duration.ofDays(3));
            // The stream existed: it is not registered again (the same one, its configuration untouched).
            assertThat(s.stream("declared").get().orElseThrow().id()).isEqualTo(streamId);

            // A second start with the same annotation finds nothing to change.
            GroupConfig before = g.config();
            runner.withBean(Declares.class).run(ctx -> assertThat(ctx).hasNotFailed());
            assertThat(s.stream("declared").consumerGroup("g").get().orElseThrow().config()).isEqualTo(before);
        }
    }

    @Test
    void withoutRegisterAMissingGroupFailsStartup() {
        runner.withBean(NeedsTheGroup.class).run(ctx -> {
            assertThat(ctx).hasFailed();
            Throwable t = ctx.getStartupFailure();
            while (t != null && !(t instanceof SluiceException)) {
                t = t.getCause();
            }
            assertThat(t).isInstanceOf(SluiceException.class);
            assertThat(((SluiceException) t).code()).isIn(ErrorCode.GROUP_NOT_FOUND, ErrorCode.STREAM_NOT_FOUND);
        });
    }
}
