package dev.sluice.consume;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import dev.sluice.BindingPattern;
import dev.sluice.ConsumeOptions;
import dev.sluice.ConsumerGroup;
import dev.sluice.Consumption;
import dev.sluice.GroupConfig;
import dev.sluice.Outcome;
import dev.sluice.ProduceOptions;
import dev.sluice.Producer;
import dev.sluice.Sluice;
import dev.sluice.embedded.test.SluiceTest;
import dev.sluice.embedded.test.TestDatabase;
import java.time.Duration;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** Binding patterns match in linear-bounded time, with the same answers as their regular expressions. */
@SluiceTest
class BindingPatternTest {
    static final String PATHOLOGICAL = "*a*a*a*a*a*a*a*a*a*a*b";
    static final String FORTY_AS = "a".repeat(40);

    @Test
    void pathologicalPatternAnswersInMilliseconds() {
        boolean matched = assertTimeoutPreemptively(Duration.ofSeconds(2),
                () -> BindingPattern.matches(PATHOLOGICAL, FORTY_AS));
        assertThat(matched).isFalse();
        assertThat(assertTimeoutPreemptively(Duration.ofSeconds(2),
                () -> BindingPattern.matches(PATHOLOGICAL, FORTY_AS + "b"))).isTrue();
        // The worst case of the matcher itself: a 256-character pattern against a 10,000-character key.
        String longPattern = "*a".repeat(127) + "b";
        assertThat(assertTimeoutPreemptively(Duration.ofSeconds(2),
                () -> BindingPattern.matches(longPattern, "a".repeat(10_000)))).isFalse();
    }

    @Test
    void agreesWithTheRegexSemanticsOnRandomInputs() {
        Random random = new Random(42);
        String patternAlphabet = "ab.*?*\\[";
        String keyAlphabet = "ab.*?\\[\n";
        for (int n = 0; n < 200_000; n++) {
            String pattern = randomString(random, patternAlphabet, 1, 8);
            String key = randomString(random, keyAlphabet, 0, 10);
            boolean regex = Pattern.compile(BindingPattern.toRegex(pattern), Pattern.DOTALL).matcher(key).matches();
            assertThat(BindingPattern.matches(pattern, key)).as("pattern %s key %s", pattern, key).isEqualTo(regex);
        }
    }

    @Test
    void questionMarkAndStarStepOverWholeCodePoints() {
        String emoji = new String(Character.toChars(0x1F600));
        for (String[] c : new String[][] {{"a?b", "a" + emoji + "b"}, {"a??b", "a" + emoji + "b"}, {"*?", emoji},
                {"?", emoji}, {"*" + emoji, "xx" + emoji}, {"?*?", emoji + emoji}, {"??", emoji}}) {
            boolean regex = Pattern.compile(BindingPattern.toRegex(c[0]), Pattern.DOTALL).matcher(c[1]).matches();
            assertThat(BindingPattern.matches(c[0], c[1])).as("pattern %s key %s", c[0], c[1]).isEqualTo(regex);
        }
        assertThat(BindingPattern.matches("a?b", "a" + emoji + "b")).isTrue();
        assertThat(BindingPattern.matches("??", emoji)).isFalse();
    }

    @Test
    void consumerWithPathologicalBindingDeliversOnlyMatchingKeys(TestDatabase db) {
        try (Sluice sluice = Sluice.builder().dataSource(db.dataSource()).schema(db.schema()).build()) {
            var stream = sluice.stream("routed", String.class);
            stream.register();
            ConsumerGroup<String> group = stream.consumerGroup("picky");
            group.register(GroupConfig.builder().bindings(PATHOLOGICAL).build());
            try (Producer<String> producer = stream.producer()) {
                for (int i = 0; i < 20; i++) {
                    producer.produce("miss-" + i, ProduceOptions.builder().routingKey(FORTY_AS).build());
                }
                producer.produce("hit", ProduceOptions.builder().routingKey(FORTY_AS + "b").build());
            }
            List<String> seen = new CopyOnWriteArrayList<>();
            ConsumeOptions opts = ConsumeOptions.defaults().withPollInterval(Duration.ofMillis(20));
            try (Consumption c = group.consume(m -> {
                seen.add(m.payload());
                return Outcome.success();
            }, opts)) {
                await().atMost(Duration.ofSeconds(30)).until(() -> c.stats().skippedFiltered() == 20 && seen.size() == 1);
            }
            assertThat(seen).containsExactly("hit");
        }
    }

    private static String randomString(Random random, String alphabet, int min, int max) {
        int length = min + random.nextInt(max - min + 1);
        StringBuilder b = new StringBuilder(length);
        for (int i = 0; i < length; i++) {
            b.append(alphabet.charAt(random.nextInt(alphabet.length())));
        }
        return b.toString();
    }
}
