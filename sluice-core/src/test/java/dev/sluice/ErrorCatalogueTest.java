package dev.sluice;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

class ErrorCatalogueTest {
    private static final Path DOC = Path.of("..", "docs", "errors.md");

    @Test
    void codesAreUniqueWellFormedAndComplete() {
        assertThat(Arrays.stream(ErrorCode.values()).map(ErrorCode::code)).doesNotHaveDuplicates()
                .allMatch(c -> c.matches("SLU-\\d{4}"));
        for (ErrorCode c : ErrorCode.values()) {
            assertThat(c.title()).as(c.name()).isNotBlank().endsWith(".");
            assertThat(c.description()).as(c.name()).isNotBlank();
            assertThat(c.fix()).as(c.name()).isNotBlank();
            assertThat(ErrorCode.lookup(c.code())).contains(c);
            assertThat(c.explain()).startsWith(c.code()).contains("fix:").contains(c.fix());
        }
        assertThat(ErrorCode.lookup("slu-100")).contains(ErrorCode.STREAM_NOT_FOUND);
        assertThat(ErrorCode.lookup("100")).contains(ErrorCode.STREAM_NOT_FOUND);
        assertThat(ErrorCode.lookup("SLU-9999")).isEmpty();
        assertThat(ErrorCode.lookup("nonsense")).isEmpty();
        assertThat(ErrorCode.lookup(null)).isEmpty();
    }

    @Test
    void exceptionsCarryCodeProblemRetryabilityAndFix() {
        SluiceException e = new SluiceException(ErrorCode.TRANSACTION_CONFLICT, "busy");
        assertThat(e.code()).isEqualTo(ErrorCode.TRANSACTION_CONFLICT);
        assertThat(e.problem()).isEqualTo("busy");
        assertThat(e.retryable()).isTrue();
        assertThat(e.fix()).isEqualTo(ErrorCode.TRANSACTION_CONFLICT.fix());
        assertThat(e.getMessage()).isEqualTo("busy [SLU-0301]");
        assertThat(new SluiceException(ErrorCode.STREAM_NOT_FOUND, null).problem()).isEqualTo(ErrorCode.STREAM_NOT_FOUND.title());
    }

    @Test
    void docsErrorsMdIsTheGeneratedCatalogue() throws Exception {
        String expected = ErrorCode.markdownCatalogue();
        if ("1".equals(System.getenv("SLUICE_WRITE_DOCS"))) {
            Files.writeString(DOC, expected, StandardCharsets.UTF_8);
        }
        assertThat(DOC).exists();
        assertThat(Files.readString(DOC, StandardCharsets.UTF_8))
                .as("docs/errors.md is stale: regenerate with SLUICE_WRITE_DOCS=1 mvn -B -pl sluice-core test -Dtest=ErrorCatalogueTest")
                .isEqualTo(expected);
    }
}
