package dev.sluice.internal.jdbc;

import dev.sluice.ErrorCode;
import dev.sluice.SluiceException;
import dev.sluice.internal.text.Echo;
import java.net.URLDecoder;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Properties;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * The database URLs Sluice accepts ({@code jdbc:postgresql:...}, and {@code postgres://} or
 * {@code postgresql://} converted to it), the data source built from one with bounded timeouts, and
 * the redaction that keeps a URL's password out of every message.
 *
 * <p>pgjdbc is given a URL only after it was checked here: its own refusal puts the whole URL,
 * password included, into the exception, and it logs a malformed port (which may be the password of a
 * {@code user:password@host} authority) to the console.
 */
public final class DatabaseUrls {
    /** TCP connect timeout set when the URL sets none. */
    public static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(10);
    /** Login timeout (TCP connect, TLS and authentication together) set when the URL sets none. */
    public static final Duration LOGIN_TIMEOUT = Duration.ofSeconds(10);
    /**
     * Socket read timeout set when the URL sets none. It must stay above the longest statement Sluice runs:
     * the migration lock wait (60 s by default), DDL of migrations and partitions, operator listings. The
     * session connection's notification wait sets its own 250 ms timeout per wait.
     */
    public static final Duration SOCKET_TIMEOUT = Duration.ofMinutes(5);
    private static final String JDBC_PREFIX = "jdbc:postgresql:";
    private static final String REDACTED = "***";

    private DatabaseUrls() {
    }

    /**
     * The JDBC URL for {@code url}: {@code jdbc:postgresql:} URLs as they are, {@code postgres://user:pw@host/db}
     * converted (user and password become parameters). Refuses anything else, and any URL pgjdbc would
     * refuse, with {@link ErrorCode#INVALID_DATABASE_URL} and the password redacted.
     */
    public static String toJdbc(String url) {
        if (url == null || url.isBlank()) {
            throw invalid("the database URL is empty", null);
        }
        String u = url.trim();
        String lower = u.toLowerCase(Locale.ROOT);
        if (lower.startsWith("postgres://") || lower.startsWith("postgresql://")) {
            u = convert(u);
        } else if (!u.startsWith(JDBC_PREFIX)) {
            // Name the scheme only (jdbc:mysql:, mysql:), never the rest of the URL on its own.
            int colon = u.indexOf(':', u.startsWith("jdbc:") ? 5 : 0);
            String scheme = colon < 0 ? "" : u.substring(0, Math.min(colon + 1, 32));
            throw invalid("the database URL must start with jdbc:postgresql:, postgres:// or postgresql://"
                    + (scheme.isEmpty() ? "" : " (it starts with '" + Echo.of(scheme) + "')"), url);
        }
        checkAuthority(u, url);
        Properties given = org.postgresql.Driver.parseURL(u, null);
        if (given == null) {
            throw invalid("the database URL does not parse", url);
        }
        checkParameters(given, url);
        return u;
    }

    /**
     * A non-pooling data source for {@code url} (see {@link #toJdbc}) with Sluice's defaults for the
     * timeouts and TCP keep-alive that the URL does not set itself: the URL's own parameters win.
     */
    public static PGSimpleDataSource dataSource(String url) {
        String jdbc = toJdbc(url);
        Properties given = org.postgresql.Driver.parseURL(jdbc, null);
        PGSimpleDataSource ds = new PGSimpleDataSource();
        try {
            ds.setUrl(jdbc);
        } catch (RuntimeException e) {
            // pgjdbc's message is not shown: it may quote the URL.
            throw invalid("a parameter of the database URL is not valid (" + e.getClass().getSimpleName() + ")", url);
        }
        if (!given.containsKey("connectTimeout")) {
            ds.setConnectTimeout((int) CONNECT_TIMEOUT.toSeconds());
        }
        if (!given.containsKey("loginTimeout")) {
            ds.setLoginTimeout((int) LOGIN_TIMEOUT.toSeconds());
        }
        if (!given.containsKey("socketTimeout")) {
            ds.setSocketTimeout((int) SOCKET_TIMEOUT.toSeconds());
        }
        if (!given.containsKey("tcpKeepAlive")) {
            ds.setTcpKeepAlive(true);
        }
        return ds;
    }

    /**
     * {@code url} as a message may show it: the password of a {@code user:password@} authority and the
     * value of every parameter whose name contains "password" replaced by {@code ***}, then cut and
     * cleaned like any echo ({@link Echo#of}).
     */
    public static String redact(String url) {
        if (url == null) {
            return "null";
        }
        String u = url;
        int scheme = u.indexOf("://");
        int at = u.lastIndexOf('@');
        if (scheme >= 0 && at > scheme) {
            // Everything between the scheme and the last '@' may be user:password; keep only the user.
            String userInfo = u.substring(scheme + 3, at);
            int colon = userInfo.indexOf(':');
            if (colon >= 0) {
                u = u.substring(0, scheme + 3) + userInfo.substring(0, colon + 1) + REDACTED + u.substring(at);
            }
        }
        int query = u.indexOf('?');
        if (query >= 0) {
            StringBuilder b = new StringBuilder(u.substring(0, query + 1));
            boolean secret = false;
            String[] parts = u.substring(query + 1).split("&", -1);
            for (int i = 0; i < parts.length; i++) {
                String part = parts[i];
                int eq = part.indexOf('=');
                if (eq >= 0) {
                    secret = decode(part.substring(0, eq)).toLowerCase(Locale.ROOT).contains("password");
                    part = secret ? part.substring(0, eq + 1) + REDACTED : part;
                } else if (secret) {
                    // A piece without '=' after a password may be the rest of a password holding '&'.
                    part = REDACTED;
                }
                b.append(i == 0 ? "" : "&").append(part);
            }
            u = b.toString();
        }
        return Echo.of(u);
    }

    /**
     * {@code text} with every form of {@code url}'s password (as written, and URL-decoded) replaced by
     * {@code ***}: for text that did not come from Sluice and may quote the URL (a driver's message).
     */
    public static String scrub(String text, String url) {
        if (text == null || url == null) {
            return text;
        }
        String out = text;
        for (String secret : passwords(url)) {
            if (secret.length() >= 1) {
                out = out.replace(secret, REDACTED);
            }
        }
        return out;
    }

    /** The password forms a URL carries (raw and decoded), longest first so a shorter form never leaves a tail. */
    static List<String> passwords(String url) {
        List<String> found = new ArrayList<>();
        int scheme = url.indexOf("://");
        int at = url.lastIndexOf('@');
        if (scheme >= 0 && at > scheme) {
            String userInfo = url.substring(scheme + 3, at);
            int colon = userInfo.indexOf(':');
            if (colon >= 0) {
                found.add(userInfo.substring(colon + 1));
            }
        }
        int query = url.indexOf('?');
        if (query >= 0) {
            for (String part : url.substring(query + 1).split("&")) {
                int eq = part.indexOf('=');
                if (eq >= 0 && decode(part.substring(0, eq)).toLowerCase(Locale.ROOT).contains("password")) {
                    found.add(part.substring(eq + 1));
                }
            }
        }
        List<String> all = new ArrayList<>();
        for (String p : found) {
            if (!p.isEmpty()) {
                all.add(p);
                all.add(decode(p));
                all.add(decodeKeepingPlus(p));
            }
        }
        all.sort((a, b) -> Integer.compare(b.length(), a.length()));
        return all;
    }

    /** postgres://[user[:password]@]hosts[/database][?params] as jdbc:postgresql://hosts/database?params&user=&password=. */
    private static String convert(String url) {
        int start = url.indexOf("://") + 3;
        String rest = url.substring(start);
        int at = rest.lastIndexOf('@');
        String user = null;
        String password = null;
        if (at >= 0) {
            String userInfo = rest.substring(0, at);
            rest = rest.substring(at + 1);
            int colon = userInfo.indexOf(':');
            user = percentDecode(colon < 0 ? userInfo : userInfo.substring(0, colon), url);
            password = colon < 0 ? null : percentDecode(userInfo.substring(colon + 1), url);
        }
        StringBuilder b = new StringBuilder("jdbc:postgresql://").append(rest);
        char sep = rest.indexOf('?') >= 0 ? '&' : '?';
        if (user != null && !user.isEmpty()) {
            b.append(sep).append("user=").append(URLEncoder.encode(user, StandardCharsets.UTF_8));
            sep = '&';
        }
        if (password != null) {
            b.append(sep).append("password=").append(URLEncoder.encode(password, StandardCharsets.UTF_8));
        }
        return b.toString();
    }

    /** Refuses a user:password@ authority in a JDBC URL and ports that are not 1 to 65535, before pgjdbc sees them. */
    private static void checkAuthority(String jdbc, String given) {
        if (!jdbc.startsWith(JDBC_PREFIX + "//")) {
            return;
        }
        String rest = jdbc.substring(JDBC_PREFIX.length() + 2);
        int end = rest.length();
        for (char c : new char[] {'/', '?'}) {
            int i = rest.indexOf(c);
            if (i >= 0 && i < end) {
                end = i;
            }
        }
        String authority = rest.substring(0, end);
        if (authority.indexOf('@') >= 0) {
            throw invalid("a jdbc:postgresql: URL takes the user and password as parameters (?user=...&password=...), "
                    + "not as user:password@host (or use a postgres:// URL)", given);
        }
        for (String host : authority.split(",", -1)) {
            int colon = host.lastIndexOf(':');
            if (host.endsWith("]") || colon < 0) {
                continue; // no port: pgjdbc uses 5432
            }
            String port = host.substring(colon + 1);
            boolean valid = !port.isEmpty() && port.length() <= 5 && port.chars().allMatch(Character::isDigit)
                    && Integer.parseInt(port) >= 1 && Integer.parseInt(port) <= 65535;
            if (!valid) {
                // The port is not quoted alone: in a mistyped user:password@ authority it is the password.
                throw invalid("a port is not a number from 1 to 65535", given);
            }
        }
    }

    /**
     * Refuses a numeric or boolean driver parameter whose value does not parse: pgjdbc reads them only when
     * it connects, and then some fail with an unchecked exception and some are silently ignored.
     */
    private static void checkParameters(Properties given, String url) {
        for (org.postgresql.PGProperty p : org.postgresql.PGProperty.values()) {
            String value = given.getProperty(p.getName());
            String def = p.getDefaultValue();
            if (value == null || def == null) {
                continue;
            }
            String v = value.trim();
            boolean number = def.matches("-?\\d+");
            boolean flag = def.equals("true") || def.equals("false");
            if (number && !v.matches("-?\\d{1,9}") || flag && !v.equalsIgnoreCase("true") && !v.equalsIgnoreCase("false")) {
                throw invalid("the parameter " + p.getName() + " must be " + (number ? "a whole number" : "true or false"), url);
            }
        }
    }

    private static String percentDecode(String s, String url) {
        try {
            // In a postgres:// URL '+' is a plus sign, not a space.
            return URLDecoder.decode(s.replace("+", "%2B"), StandardCharsets.UTF_8);
        } catch (IllegalArgumentException e) {
            throw invalid("the user or password of the database URL has a malformed %-escape", url);
        }
    }

    private static String decodeKeepingPlus(String s) {
        try {
            return URLDecoder.decode(s.replace("+", "%2B"), StandardCharsets.UTF_8);
        } catch (IllegalArgumentException e) {
            return s;
        }
    }

    private static String decode(String s) {
        try {
            return URLDecoder.decode(s, StandardCharsets.UTF_8);
        } catch (IllegalArgumentException e) {
            return s;
        }
    }

    private static SluiceException invalid(String problem, String url) {
        return new SluiceException(ErrorCode.INVALID_DATABASE_URL, url == null ? problem : problem + ": " + redact(url));
    }
}
