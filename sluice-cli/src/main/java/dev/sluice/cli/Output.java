package dev.sluice.cli;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import dev.sluice.MigrationStatus;
import dev.sluice.SluiceException;
import dev.sluice.SystemInfo;
import dev.sluice.internal.jdbc.DatabaseUrls;
import dev.sluice.server.json.ControlEscapes;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** Renders results as text tables or JSON, and errors as coded messages. */
final class Output {
    private static final ObjectMapper JSON = mapper().enable(SerializationFeature.INDENT_OUTPUT);
    private static final ObjectMapper COMPACT = mapper();

    /** JSON printed to a terminal escapes every control character, C0 to the line separators (as the server's does). */
    private static ObjectMapper mapper() {
        ObjectMapper m = new ObjectMapper();
        m.getFactory().setCharacterEscapes(ControlEscapes.forTerminals());
        return m;
    }

    private Output() {
    }

    static Map<String, Object> system(SystemInfo s) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("id", s.id());
        m.put("name", s.name());
        m.put("schema", s.schema());
        m.put("version", s.version());
        m.put("code_version", s.codeVersion());
        m.put("created_at", s.createdAt().toString());
        return m;
    }

    static Map<String, Object> migration(MigrationStatus s) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("scope", s.scope());
        m.put("name", s.name());
        m.put("stream_id", s.streamId());
        m.put("database_version", s.databaseVersion());
        m.put("code_version", s.codeVersion());
        m.put("state", s.state().name().toLowerCase(java.util.Locale.ROOT));
        m.put("problem", s.problem());
        return m;
    }

    static void json(PrintWriter out, Object value) {
        try {
            out.println(JSON.writeValueAsString(value));
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }

    /** One compact JSON document on one line (for streams of records). */
    static void jsonLine(PrintWriter out, Object value) {
        try {
            out.println(COMPACT.writeValueAsString(value));
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }

    static String duration(Duration d) {
        if (d == null) {
            return "forever";
        }
        return Durations.format(d);
    }

    /** Prints rows as an aligned table with a header; cells are escaped first (one cell, one line, aligned). */
    static void table(PrintWriter out, List<String> header, List<List<String>> rows) {
        int[] widths = new int[header.size()];
        List<List<String>> all = new ArrayList<>();
        all.add(header);
        for (List<String> row : rows) {
            all.add(row.stream().map(cell -> Terminal.escape(String.valueOf(cell))).toList());
        }
        for (List<String> row : all) {
            for (int i = 0; i < row.size(); i++) {
                widths[i] = Math.max(widths[i], row.get(i).length());
            }
        }
        for (List<String> row : all) {
            StringBuilder line = new StringBuilder();
            for (int i = 0; i < row.size(); i++) {
                line.append(i == 0 ? "" : "  ");
                line.append(i == row.size() - 1 ? row.get(i) : String.format("%-" + widths[i] + "s", row.get(i)));
            }
            out.println(line.toString().stripTrailing());
        }
    }

    /** Prints key: value lines. */
    static void fields(PrintWriter out, Map<String, ?> fields) {
        int width = fields.keySet().stream().mapToInt(String::length).max().orElse(0) + 1;
        fields.forEach((k, v) -> out.println(String.format("%-" + width + "s  %s", k + ":", Terminal.escape(String.valueOf(v)))));
    }

    /**
     * Prints a coded error. The problem is the library's (inputs already cut); any form of the database
     * URL's password that a driver message may quote is scrubbed from it.
     */
    static void error(PrintWriter out, PrintWriter err, boolean json, SluiceException e, String databaseUrl) {
        String problem = DatabaseUrls.scrub(e.problem(), databaseUrl);
        if (json) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("code", e.code().code());
            m.put("name", e.code().name());
            m.put("problem", problem);
            m.put("retryable", e.retryable());
            m.put("fix", e.fix());
            json(out, Map.of("error", m));
        } else {
            err.println("error: " + Terminal.escape(problem) + " [" + e.code().code() + "]");
            err.println("  fix: " + e.fix());
        }
    }
}
