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
      super(answeredText(status));
      this.status = status;
    }

    public int status() {
      return status;
    }
  }

  /** The body of a 504: the call passed this downstream's timeout. */
  public String timedOutText() {
    return timedOutText(timeout.toMillis());
  }

  /** The body of a 504, for the apps that hold the timeout in milliseconds. */
  public static String timedOutText(long timeoutMs) {
    return "downstream did not answer within " + timeoutMs + " ms";
  }

  /** The body of a 502 for a downstream that answered with an error status. */
  public static String answeredText(int status) {
    return "downstream answered " + status;
  }

  /** The body of a 502 for a call that failed without an answer (refused, reset, ...). */
  public static String failedText(Object reason) {
    return "downstream failed: " + reason;
  }

  /** The body of a successful /enrich. */
  public static String enriched(String key, String value) {
    return key + "=" + value;
  }
}
