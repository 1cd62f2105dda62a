package dev.sluice.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.ErrorCode;
import dev.sluice.JobHandle;
import dev.sluice.Message;
import dev.sluice.SluiceException;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/** A listener or job method that Sluice cannot call, or an annotation value out of range, fails startup with SLU-0126. */
class InvalidListenerTest {
    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(DataSourceAutoConfiguration.class, SluiceAutoConfiguration.class,
                    SluiceListenerAutoConfiguration.class))
            .withPropertyValues(TestDb.properties(TestDb.freshSchema("invalid")));

    static class ReturnsString {
        @SluiceListener(stream = "s", group = "g")
        String handle(String text) {
            return text;
        }
    }

    static class ThreeParameters {
        @SluiceListener(stream = "s", group = "g")
        void handle(String a, Message<String> m, String c) {
        }
    }

    static class JobHandleOnAStream {
        @SluiceListener(stream = "s", group = "g")
        void handle(JobHandle<String> job) {
        }
    }

    static class MessageOnAJob {
        @SluiceJob(queue = "q")
        void handle(Message<String> m) {
        }
    }

    static class MismatchedTypes {
        @SluiceListener(stream = "s", group = "g")
        void handle(String text, Message<Integer> m) {
        }
    }

    static class PrimitivePayload {
        @SluiceJob(queue = "q")
        void handle(int n) {
        }
    }

    static class BadPolicy {
        @SluiceListener(stream = "s", group = "g", concurrencyPolicy = "sometimes")
        void handle(String text) {
        }
    }

    static class BadStart {
        @SluiceListener(stream = "s", group = "g", start = "yesterday")
        void handle(String text) {
        }
    }

    static class BadAttempts {
        @SluiceListener(stream = "s", group = "g", maxAttempts = "0")
        void handle(String text) {
        }
    }

    static class BadDuration {
        @SluiceListener(stream = "s", group = "g", initialBackoff = "soon")
        void handle(String text) {
        }
    }

    static class InvertedBackoff {
        @SluiceListener(stream = "s", group = "g", initialBackoff = "10s", maxBackoff = "1s")
        void handle(String text) {
        }
    }

    static class BadName {
        @SluiceListener(stream = "Not A Name", group = "g")
        void handle(String text) {
        }
    }

    static class MissingPlaceholder {
        @SluiceListener(stream = "${no.such.property}", group = "g")
        void handle(String text) {
        }
    }

    static class BadBinding {
        @SluiceListener(stream = "s", group = "g", bindings = "")
        void handle(String text) {
        }
    }

    static class BadConcurrency {
        @SluiceJob(queue = "q", concurrency = "lots")
        void handle(String text) {
        }
    }

    static class BadRegister {
        @SluiceListener(stream = "s", group = "g", register = "maybe")
        void handle(String text) {
        }
    }

    static class Both {
        @SluiceListener(stream = "s", group = "g")
        @SluiceJob(queue = "q")
        void handle(String text) {
        }
    }

    @Test
    void everyBadMethodOrValueFailsStartupWithListenerInvalid() {
        record Case(Class<?> bean, String mentions) {
        }
        List<Case> cases = List.of(new Case(ReturnsString.class, "must return dev.sluice.Outcome or void"),
                new Case(ThreeParameters.class, "takes 3 parameters"), new Case(JobHandleOnAStream.class, "JobHandle"),
                new Case(MessageOnAJob.class, "Message"), new Case(MismatchedTypes.class, "differs from its payload"),
                new Case(PrimitivePayload.class, "cannot decode (int)"), new Case(BadPolicy.class, "concurrencyPolicy"),
                new Case(BadStart.class, "start must be beginning, head"), new Case(BadAttempts.class, "maxAttempts must be between 1"),
                new Case(BadDuration.class, "initialBackoff must be a duration"), new Case(InvertedBackoff.class, "backoff"),
                new Case(BadName.class, "stream"), new Case(MissingPlaceholder.class, "placeholder"),
                new Case(BadBinding.class, "empty pattern"), new Case(BadConcurrency.class, "concurrency must be a whole number"),
                new Case(BadRegister.class, "register must be true or false"), new Case(Both.class, "both @SluiceListener and @SluiceJob"));
        for (Case c : cases) {
            runner.withBean(c.bean()).run(ctx -> {
                assertThat(ctx).as(c.bean().getSimpleName()).hasFailed();
                SluiceException e = sluiceException(ctx.getStartupFailure());
                assertThat(e.code()).as(c.bean().getSimpleName()).isEqualTo(ErrorCode.LISTENER_INVALID);
                assertThat(e.getMessage()).as(c.bean().getSimpleName()).contains(c.mentions()).contains("SLU-0126");
            });
        }
    }

    @Test
    void aPrivateMethodOnAPlainBeanIsFine() {
        runner.withUserConfiguration(PrivateConfig.class).withPropertyValues("sluice.listeners.enabled=false")
                .run(ctx -> assertThat(ctx).hasNotFailed());
    }

    @Configuration(proxyBeanMethods = false)
    static class PrivateConfig {
        @Bean
        PrivateListener privateListener() {
            return new PrivateListener();
        }
    }

    static class PrivateListener {
        @SluiceListener(stream = "s", group = "g")
        private void handle(byte[] raw) {
        }
    }

    @Test
    void aPrivateMethodOnAProxiedBeanIsRefused() {
        runner.withConfiguration(AutoConfigurations.of(
                        org.springframework.boot.transaction.autoconfigure.TransactionAutoConfiguration.class,
                        org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration.class))
                .withBean(ProxiedPrivate.class).run(ctx -> {
                    assertThat(ctx).hasFailed();
                    assertThat(sluiceException(ctx.getStartupFailure()).getMessage()).contains("private or final on a proxied bean");
                });
    }

    /** Proxied for its {@code @Transactional} method; its private listener could not be delegated. */
    static class ProxiedPrivate {
        @org.springframework.transaction.annotation.Transactional
        public void work() {
        }

        @SluiceListener(stream = "s", group = "g")
        private void handle(String text) {
        }
    }

    private static SluiceException sluiceException(Throwable t) {
        for (Throwable c = t; c != null; c = c.getCause()) {
            if (c instanceof SluiceException se && se.code() == ErrorCode.LISTENER_INVALID) {
                return se;
            }
        }
        throw new AssertionError("no SLU-0126 in " + t, t);
    }
}
