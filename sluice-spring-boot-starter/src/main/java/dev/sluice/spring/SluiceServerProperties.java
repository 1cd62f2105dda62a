package dev.sluice.spring;

/** {@code sluice.server.*}: the HTTP/JSON API of sluice-server, started with the context when enabled. */
public class SluiceServerProperties {
    /** Whether to start the Sluice HTTP server (needs sluice-server on the classpath). */
    private boolean enabled = false;

    /** Address to listen on; a non-loopback address needs an API token to exist. */
    private String bind = "127.0.0.1";

    /** Port to listen on; 0 picks a free one. */
    private int port = 7070;

    /** Whether /metrics needs no token. */
    private boolean metricsPublic = false;

    /** @return whether the server starts */
    public boolean isEnabled() {
        return enabled;
    }

    /** @param enabled whether the server starts */
    public void setEnabled(boolean enabled) {
        this.enabled = enabled;
    }

    /** @return the bind address */
    public String getBind() {
        return bind;
    }

    /** @param bind the bind address */
    public void setBind(String bind) {
        this.bind = bind;
    }

    /** @return the port */
    public int getPort() {
        return port;
    }

    /** @param port the port */
    public void setPort(int port) {
        this.port = port;
    }

    /** @return whether /metrics is public */
    public boolean isMetricsPublic() {
        return metricsPublic;
    }

    /** @param metricsPublic whether /metrics is public */
    public void setMetricsPublic(boolean metricsPublic) {
        this.metricsPublic = metricsPublic;
    }
}
