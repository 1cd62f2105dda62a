package dev.sluice.internal.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** The error-text cleaner alone: what it replaces, what it keeps, where it cuts. */
class ErrorTextTest {

    @Test
    void cleanTextIsReturnedAsItIs() {
        String s = "java.lang.IllegalStateException: boom\n\tat x.y(Z.java:1)\r\n😀 ok";
        assertThat(ErrorText.clean(s)).isSameAs(s);
        assertThat(ErrorText.clean(null)).isNull();
    }

    @Test
    void nulControlCharactersAndLoneSurrogatesAreReplaced() {
        assertThat(ErrorText.clean("a\u0000b\u001bc\u007fd\u0085e")).isEqualTo("a\uFFFDb\uFFFDc\uFFFDd\uFFFDe");
        assertThat(ErrorText.clean("\uD800x\uDC00")).isEqualTo("\uFFFDx\uFFFD");
        assertThat(ErrorText.clean("end\uD83D")).isEqualTo("end\uFFFD");
        assertThat(ErrorText.clean("\u0000😀")).isEqualTo("\uFFFD😀");
    }

    @Test
    void longTextIsCutToTheLimitWithAMarkAndNeverSplitsAPair() {
        String cut = ErrorText.clean("y".repeat(ErrorText.MAX_CHARS * 2));
        assertThat(cut).hasSize(ErrorText.MAX_CHARS).endsWith("y" + ErrorText.CUT_MARK);
        // A pair straddling the cut is dropped whole, not halved.
        String straddling = "y".repeat(ErrorText.MAX_CHARS - 2) + "😀" + "tail";
        String out = ErrorText.clean(straddling);
        assertThat(out).endsWith("y" + ErrorText.CUT_MARK).hasSize(ErrorText.MAX_CHARS - 1);
        assertThat(ErrorText.clean("\u0000".repeat(ErrorText.MAX_CHARS + 5))).hasSize(ErrorText.MAX_CHARS)
                .doesNotContain("\u0000");
    }

    @Test
    void throwablesAreCleanedWithTheirStack() {
        RuntimeException cause = new RuntimeException("cause \u0000");
        Exception e = new IllegalStateException("bad \u0000", cause);
        // Short stacks, so the cut at the limit does not drop the cause.
        StackTraceElement here = new StackTraceElement("ErrorTextTest", "throwables", "ErrorTextTest.java", 1);
        e.setStackTrace(new StackTraceElement[] {here});
        cause.setStackTrace(new StackTraceElement[] {here});
        assertThat(ErrorText.of(e)).isEqualTo("java.lang.IllegalStateException: bad \uFFFD");
        assertThat(ErrorText.stackTrace(e)).contains("bad \uFFFD").contains("cause \uFFFD").contains("ErrorTextTest")
                .doesNotContain("\u0000");
    }
}
