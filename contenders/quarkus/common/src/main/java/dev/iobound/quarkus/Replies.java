package dev.iobound.quarkus;

import com.fasterxml.jackson.core.JacksonException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.iobound.common.BadRequest;
import dev.iobound.common.Contract;
import dev.iobound.common.Downstream;
import jakarta.ws.rs.WebApplicationException;
import jakarta.ws.rs.core.Response;
import java.net.SocketTimeoutException;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.TimeoutException;

/**
 * What every model answers the same way: texts, JSON, the body's text, the downstream's outcome.
 */
final class Replies {
  private static final ObjectMapper JSON = new ObjectMapper();

  private Replies() {}

  static Response text(int status, String body) {
    return Response.status(status).type("text/plain;charset=utf-8").entity(body).build();
  }

  static Response json(int status, Object value) {
    try {
      return Response.status(status)
          .type("application/json")
          .entity(JSON.writeValueAsString(value))
          .build();
    } catch (JacksonException e) {
      throw new IllegalStateException("a message always serialises", e);
    }
  }

  static Map<String, Object> message(long id, String text) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("id", id);
    m.put("text", text);
    return m;
  }

  /** A statement's single message, or 404. */
  static Response answer(int status, Map<String, Object> message) {
    return message == null ? text(404, "no such message") : json(status, message);
  }

  static Response deleted(boolean found) {
    return found ? Response.noContent().build() : text(404, "no such message");
  }

  /**
   * The validated text of a create/update body, parsed with Jackson (strict JSON, nesting limited).
   */
  static String text(String body) {
    if (body == null) {
      throw new BadRequest("body must be a JSON object with \"text\"");
    }
    JsonNode parsed;
    try {
      parsed = JSON.readTree(body);
    } catch (JacksonException e) {
      throw new BadRequest("body is not valid JSON");
    }
    if (parsed == null || !parsed.isObject()) {
      throw new BadRequest("body must be a JSON object with \"text\"");
    }
    JsonNode text = parsed.get("text");
    return Contract.messageText(text != null && text.isTextual() ? text.asText() : null);
  }

  /** /enrich's answer from the downstream's response or the client's failure. */
  static Response enriched(String key, Response r, Throwable failure, long timeoutMs) {
    if (failure == null && r.getStatus() / 100 == 2) {
      return text(200, Downstream.enriched(key, r.readEntity(String.class)));
    }
    return downstreamFailed(
        failure == null ? new Downstream.StatusException(r.getStatus()) : failure, timeoutMs);
  }

  /** The downstream's body, or a StatusException for an answer that is not 2xx. */
  static String value(Response r) throws Downstream.StatusException {
    if (r.getStatus() / 100 != 2) {
      throw new Downstream.StatusException(r.getStatus());
    }
    return r.readEntity(String.class);
  }

  /** 502 for a call that failed or answered an error, 504 for one that passed the timeout. */
  static Response downstreamFailed(Throwable failure, long timeoutMs) {
    if (failure instanceof WebApplicationException w) {
      return text(502, Downstream.answeredText(w.getResponse().getStatus()));
    }
    if (failure instanceof Downstream.StatusException) {
      return text(502, failure.getMessage());
    }
    if (timedOut(failure)) {
      return text(504, Downstream.timedOutText(timeoutMs));
    }
    return text(502, Downstream.failedText(failure.getMessage()));
  }

  /**
   * The REST client reports its timeout as a ProcessingException around Vert.x's timeout exception.
   */
  private static boolean timedOut(Throwable e) {
    for (Throwable t = e; t != null; t = t.getCause()) {
      if (t instanceof TimeoutException
          || t instanceof SocketTimeoutException
          || t.getClass().getSimpleName().contains("Timeout")) {
        return true;
      }
    }
    return false;
  }
}
