package dev.sluice.cli;

import dev.sluice.ErrorCode;
import dev.sluice.SluiceException;
import java.util.LinkedHashMap;
import java.util.Map;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;

@Command(name = "explain", description = "Print the catalogue entry of an error code (offline), e.g. sluice explain SLU-0100.")
final class ExplainCommand extends Base {
    @Parameters(paramLabel = "CODE", description = "An error code such as SLU-0100 (or 100).")
    String code;

    @Override
    public Integer call() {
        ErrorCode c = ErrorCode.lookup(code).orElseThrow(() -> new SluiceException(ErrorCode.UNKNOWN_ERROR_CODE,
                "'" + Terminal.echo(code) + "' is not a Sluice error code"));
        if (json()) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("code", c.code());
            m.put("name", c.name());
            m.put("category", c.category().name().toLowerCase(java.util.Locale.ROOT));
            m.put("retryable", c.retryable());
            m.put("problem", c.title());
            m.put("cause", c.description());
            m.put("fix", c.fix());
            Output.json(out(), m);
        } else {
            out().print(c.explain());
        }
        return Main.OK;
    }
}
