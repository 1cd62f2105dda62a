package dev.sluice;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Every relative link of the README and the pages in {@code docs/} (and the examples' READMEs) names a file that
 * exists and, with a {@code #fragment}, a heading of that file (GitHub's anchors: lower case, punctuation dropped,
 * spaces as hyphens).
 */
class DocsLinksTest {
    private static final Pattern LINK = Pattern.compile("\\]\\(([^)\\s]+)\\)");
    private static final Pattern HEADING = Pattern.compile("^#{1,6}\\s+(.+?)\\s*$", Pattern.MULTILINE);

    @Test
    void everyRelativeLinkAndAnchorResolves() throws IOException {
        Path root = Path.of("..").toAbsolutePath().normalize();
        List<Path> pages = new ArrayList<>();
        pages.add(root.resolve("README.md"));
        try (Stream<Path> docs = Files.walk(root.resolve("docs"))) {
            docs.filter(p -> p.toString().endsWith(".md")).forEach(pages::add);
        }
        Path examples = root.resolve("examples");
        if (Files.isDirectory(examples)) {
            try (Stream<Path> ex = Files.walk(examples, 2)) {
                ex.filter(p -> p.getFileName().toString().equals("README.md")).forEach(pages::add);
            }
        }
        List<String> broken = new ArrayList<>();
        for (Path page : pages) {
            String text = withoutCode(Files.readString(page));
            Matcher m = LINK.matcher(text);
            while (m.find()) {
                String target = m.group(1);
                if (target.matches("^[a-z]+:.*") || target.startsWith("/")) {
                    continue; // http(s), mailto, absolute server paths of the dashboard
                }
                int hash = target.indexOf('#');
                String file = hash < 0 ? target : target.substring(0, hash);
                String anchor = hash < 0 ? null : target.substring(hash + 1);
                Path resolved = file.isEmpty() ? page : page.getParent().resolve(file).normalize();
                if (!Files.exists(resolved)) {
                    broken.add(root.relativize(page) + ": " + target + " (no such file)");
                } else if (anchor != null && resolved.toString().endsWith(".md") && !anchors(resolved).contains(anchor)) {
                    broken.add(root.relativize(page) + ": " + target + " (no such heading)");
                }
            }
        }
        assertThat(pages).hasSizeGreaterThan(10);
        assertThat(broken).isEmpty();
    }

    /** The page without its fenced code blocks (their brackets are code, not links). */
    private static String withoutCode(String text) {
        return text.replaceAll("(?s)```.*?```", "");
    }

    private static Set<String> anchors(Path page) throws IOException {
        Set<String> out = new HashSet<>();
        Matcher m = HEADING.matcher(withoutCode(Files.readString(page)));
        while (m.find()) {
            String slug = m.group(1).toLowerCase(Locale.ROOT).replaceAll("[^\\p{L}\\p{N} _-]", "").replace(' ', '-');
            String unique = slug;
            for (int i = 1; !out.add(unique); i++) {
                unique = slug + "-" + i;
            }
        }
        return out;
    }
}
