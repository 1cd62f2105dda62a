package dev.sluice.testing;

import java.io.File;
import java.io.IOException;
import java.net.URL;
import java.net.URLClassLoader;
import java.util.ArrayList;
import java.util.List;
import java.util.jar.JarFile;
import java.util.jar.Manifest;

/**
 * A class loader over this test JVM's class path (a manifest-only booter jar expanded) without some libraries' jars,
 * which records every class of theirs (and of Sluice's integrations with them) it is asked for: how the tests show
 * that a client without an optional integration never loads it.
 */
public final class ClassPathWithout extends URLClassLoader {
    private final List<String> askedPrefixes;
    private final List<String> asked;

    /**
     * @param jarPathFragments parts of a jar's URL that leave it out ({@code "/io/micrometer/"})
     * @param askedPrefixes    class-name prefixes whose loading is recorded in {@code asked}
     * @param asked            where the names are recorded (thread-safe)
     */
    public ClassPathWithout(List<String> jarPathFragments, List<String> askedPrefixes, List<String> asked) throws IOException {
        super(classPath(jarPathFragments), ClassLoader.getPlatformClassLoader());
        this.askedPrefixes = askedPrefixes;
        this.asked = asked;
    }

    @Override
    protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
        for (String p : askedPrefixes) {
            if (name.startsWith(p)) {
                asked.add(name);
                break;
            }
        }
        return super.loadClass(name, resolve);
    }

    private static URL[] classPath(List<String> without) throws IOException {
        List<URL> out = new ArrayList<>();
        for (String entry : System.getProperty("java.class.path").split(File.pathSeparator)) {
            if (entry.isEmpty()) {
                continue;
            }
            File f = new File(entry);
            add(out, f.toURI().toURL(), without);
            if (f.isFile() && f.getName().endsWith(".jar")) {
                try (JarFile jar = new JarFile(f)) {
                    Manifest m = jar.getManifest();
                    String more = m == null ? null : m.getMainAttributes().getValue("Class-Path");
                    if (more != null) {
                        for (String e : more.trim().split("\\s+")) {
                            add(out, new URL(f.toURI().toURL(), e), without);
                        }
                    }
                }
            }
        }
        return out.toArray(URL[]::new);
    }

    private static void add(List<URL> out, URL url, List<String> without) {
        String s = url.toString();
        if (without.stream().noneMatch(s::contains)) {
            out.add(url);
        }
    }
}
