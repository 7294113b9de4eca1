package dev.iobound.common;

import java.io.IOException;
import java.net.URI;
import java.time.Duration;

/** Where /enrich calls the harness's downstream service, and how long it waits for an answer. */
public record Downstream(String baseUrl, Duration timeout) {
  public static Downstream fromEnvironment() {
    String url = System.getenv().getOrDefault("IOBOUND_DOWNSTREAM_URL", "http://127.0.0.1:8081");
    long ms = Long.parseLong(System.getenv().getOrDefault("IOBOUND_DOWNSTREAM_TIMEOUT_MS", "2000"));
    return new Downstream(url, Duration.ofMillis(ms));
  }

  /** The downstream URL for a key already checked by {@link Contract#enrichKey}. */
  public URI valueUri(String key) {
    return URI.create(baseUrl + "/value?key=" + key);
  }

  /** A downstream answer that was not 2xx, for the clients that do not raise one themselves. */
  public static final class StatusException extends IOException {
    private final int status;

    public StatusException(int status) {
      super("downstream answered " + status);
      this.status = status;
    }

    public int status() {
      return status;
    }
  }

  /** The body of a successful /enrich. */
  public static String enriched(String key, String value) {
    return key + "=" + value;
  }
}
