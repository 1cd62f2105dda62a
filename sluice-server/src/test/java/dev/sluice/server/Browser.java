package dev.sluice.server;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import org.openqa.selenium.By;
import org.openqa.selenium.JavascriptExecutor;
import org.openqa.selenium.NoSuchElementException;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.StaleElementReferenceException;
import org.openqa.selenium.WebDriver;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;
import org.openqa.selenium.support.ui.WebDriverWait;

/**
 * Headless Debian Chromium driven through Debian's chromedriver, both named explicitly so that Selenium never
 * looks for (or downloads) a browser or a driver of its own; explicit waits only, full-page screenshots.
 */
final class Browser implements AutoCloseable {
    static final Path CHROMIUM = Path.of("/usr/bin/chromium");
    static final Path CHROMEDRIVER = Path.of("/usr/bin/chromedriver");

    final ChromeDriver driver;
    private final ChromeDriverService service;
    private final Path profile;
    private final Path shots;
    private int width = 1280;
    private boolean mobile;

    Browser(Path shots) throws IOException {
        this.shots = Files.createDirectories(shots);
        this.profile = Files.createTempDirectory("sluice-dashboard-chromium");
        System.setProperty("webdriver.chrome.driver", CHROMEDRIVER.toString());
        ChromeOptions options = new ChromeOptions();
        options.setBinary(CHROMIUM.toFile());
        options.addArguments("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-quic",
                "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync",
                "--disable-extensions", "--hide-scrollbars", "--force-color-profile=srgb", "--lang=en-US",
                "--user-data-dir=" + profile, "--window-size=1280,800");
        options.setCapability("goog:loggingPrefs", Map.of("browser", "ALL"));
        service = new ChromeDriverService.Builder().usingDriverExecutable(new File(CHROMEDRIVER.toString())).usingAnyFreePort()
                .build();
        driver = new ChromeDriver(service, options);
        driver.manage().timeouts().pageLoadTimeout(Duration.ofSeconds(20)).scriptTimeout(Duration.ofSeconds(10));
        viewport(1280, false);
    }

    /** Lays the page out at this width (a phone is 390 px wide and mobile). */
    void viewport(int w, boolean phone) {
        this.width = w;
        this.mobile = phone;
        metrics(800);
    }

    private void metrics(int height) {
        driver.executeCdpCommand("Emulation.setDeviceMetricsOverride", Map.of("width", width, "height", height,
                "deviceScaleFactor", 1, "mobile", mobile));
    }

    /** Waits (up to 15 s) until {@code condition} gives a non-null, non-false value; stale elements are retried. */
    <T> T until(String what, Function<WebDriver, T> condition) {
        return new WebDriverWait(driver, Duration.ofSeconds(15), Duration.ofMillis(100))
                .ignoring(StaleElementReferenceException.class).ignoring(NoSuchElementException.class)
                .withMessage(what).until(condition);
    }

    WebElement waitFor(String css) {
        return until("an element " + css, d -> {
            List<WebElement> found = d.findElements(By.cssSelector(css));
            return found.isEmpty() || !found.get(0).isDisplayed() ? null : found.get(0);
        });
    }

    void waitGone(String css) {
        until("no element " + css, d -> d.findElements(By.cssSelector(css)).isEmpty());
    }

    /** Waits until the element's text is {@code text}. */
    void waitText(String css, String text) {
        until(css + " reading '" + text + "'", d -> {
            List<WebElement> found = d.findElements(By.cssSelector(css));
            return !found.isEmpty() && found.get(0).getText().trim().equals(text);
        });
    }

    String text(String css) {
        return until("text of " + css, d -> d.findElement(By.cssSelector(css)).getText());
    }

    int count(String css) {
        return driver.findElements(By.cssSelector(css)).size();
    }

    void click(String css) {
        until("a click on " + css, d -> {
            WebElement e = d.findElement(By.cssSelector(css));
            if (!e.isDisplayed() || !e.isEnabled()) {
                return false;
            }
            e.click();
            return true;
        });
    }

    /** Goes to a dashboard route ({@code #/fleet}) by its hash, as a reader following a link. */
    void go(String hash) {
        ((JavascriptExecutor) driver).executeScript("location.hash = arguments[0]", hash);
    }

    /** Waits until a poll after {@code since} (ms) has finished (the live status stamps each one). */
    void waitPollAfter(long since) {
        until("a poll after " + since, d -> {
            String v = d.findElement(By.id("live-status")).getAttribute("data-updated");
            return v != null && Long.parseLong(v) > since;
        });
    }

    long now() {
        return ((Number) ((JavascriptExecutor) driver).executeScript("return Date.now()")).longValue();
    }

    /** A screenshot of the whole page (up to 2,400 px tall) as {@code name}.png. */
    Path shot(String name) throws IOException {
        Number h = (Number) ((JavascriptExecutor) driver).executeScript("return document.documentElement.scrollHeight");
        metrics(Math.max(400, Math.min(2400, h.intValue())));
        try {
            byte[] png = driver.getScreenshotAs(OutputType.BYTES);
            Path file = shots.resolve(name + ".png");
            Files.write(file, png);
            return file;
        } finally {
            metrics(800);
        }
    }

    /** What the page logged that is a script error or a content-policy refusal (an HTTP error answer is not). */
    List<String> scriptErrors() {
        return driver.manage().logs().get(org.openqa.selenium.logging.LogType.BROWSER).getAll().stream()
                .map(org.openqa.selenium.logging.LogEntry::getMessage)
                .filter(m -> m.contains("Content Security Policy") || m.contains("Uncaught") || m.contains("TypeError")
                        || m.contains("ReferenceError") || m.contains("SyntaxError"))
                .toList();
    }

    @Override
    public void close() {
        try {
            driver.quit();
        } finally {
            service.stop();
            deleteQuietly(profile);
        }
    }

    private static void deleteQuietly(Path dir) {
        try (var walk = Files.walk(dir)) {
            walk.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException | RuntimeException e) {
            // a temporary profile left behind is harmless
        }
    }
}
