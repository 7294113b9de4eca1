package dev.iobound.helidon;

import com.zaxxer.hikari.HikariDataSource;
import dev.iobound.common.Args;
import dev.iobound.common.BadRequest;
import dev.iobound.common.Contract;
import dev.iobound.common.Corpus;
import dev.iobound.common.Database;
import dev.iobound.common.Downstream;
import dev.iobound.common.FanOut;
import dev.iobound.common.JdbcPool;
import dev.iobound.common.RuntimeReport;
import io.helidon.http.HeaderNames;
import io.helidon.webclient.api.HttpClientResponse;
import io.helidon.webclient.api.WebClient;
import io.helidon.webserver.WebServer;
import io.helidon.webserver.http.HttpRouting;
import io.helidon.webserver.http.ServerRequest;
import io.helidon.webserver.http.ServerResponse;
import jakarta.json.Json;
import jakarta.json.JsonArrayBuilder;
import jakarta.json.JsonException;
import jakarta.json.JsonObject;
import jakarta.json.JsonReader;
import jakarta.json.JsonString;
import jakarta.json.JsonStructure;
import jakarta.json.JsonValue;
import java.io.IOException;
import java.io.StringReader;
import java.net.SocketTimeoutException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.List;

/**
 * Helidon 4 SE: the WebServer runs every request on its own virtual thread, so the handlers are
 * plain blocking code (Thread.sleep, Files.readAllBytes, a blocking WebClient call, JDBC) and the
 * virtual thread unmounts from its carrier while it waits. This is the model Helidon 4 was
 * rewritten around ("Níma"): no event loop and no worker pool in the request path.
 */
public final class HelidonApp {

  private final Corpus corpus = Corpus.fromEnvironment();
  private final Downstream downstream = Downstream.fromEnvironment();

  /** Helidon's own HTTP client: blocking API, keep-alive connection cache, read timeout. */
  private final WebClient client;

  /** /messages: blocking JDBC on the request's virtual thread, connections from HikariCP. */
  private final HikariDataSource pool;

  HelidonApp(Database db) {
    client =
        WebClient.builder()
            .baseUri(downstream.baseUrl())
            .connectTimeout(downstream.timeout())
            .readTimeout(downstream.timeout())
            .followRedirects(false)
            .build();
    pool = JdbcPool.of(db);
  }

  void routing(HttpRouting.Builder r) {
    r.get("/plaintext", (req, res) -> text(res, 200, Contract.PLAINTEXT))
        .get(
            "/delay",
            (req, res) -> {
              long ms = Contract.delayMs(param(req, "ms"));
              Thread.sleep(ms); // parks this request's virtual thread
              text(res, 200, Long.toString(ms));
            })
        .get(
            "/hash",
            (req, res) -> {
              int id = Contract.hashId(param(req, "id"), corpus.files());
              Thread.sleep(Contract.hashDelayMs(param(req, "delayMs")));
              text(res, 200, corpus.hash(id)); // blocking read on the virtual thread
            })
        .get("/enrich", (req, res) -> enrich(Contract.enrichKey(param(req, "key")), res))
        .get("/aggregate", (req, res) -> aggregate(Contract.aggregateKeys(param(req, "keys")), res))
        .get("/messages", (req, res) -> list(Contract.messageLimit(param(req, "limit")), res))
        .post(
            "/messages",
            (req, res) -> {
              String text = text(req);
              answer(res, 201, one(Database.CREATE, st -> st.setString(1, text)));
            })
        .get(
            "/messages/{id}",
            (req, res) -> {
              long id = id(req);
              answer(res, 200, one(Database.GET, st -> st.setLong(1, id)));
            })
        .put(
            "/messages/{id}",
            (req, res) -> {
              long id = id(req);
              String text = text(req);
              answer(
                  res,
                  200,
                  one(
                      Database.UPDATE,
                      st -> {
                        st.setString(1, text);
                        st.setLong(2, id);
                      }));
            })
        .delete("/messages/{id}", (req, res) -> delete(id(req), res))
        .error(BadRequest.class, (req, res, e) -> text(res, 400, e.getMessage()))
        .error(TooLarge.class, (req, res, e) -> text(res, 413, e.getMessage()));
  }

  private void enrich(String key, ServerResponse res) {
    try {
      text(res, 200, Downstream.enriched(key, value(key)));
    } catch (IOException | RuntimeException e) {
      downstreamFailed(e, res);
    }
  }

  /**
   * The fan-out: an executor of virtual threads per request, a blocking call per key; when one
   * fails the others are interrupted, which closes their sockets (a virtual thread blocked on a
   * socket is interruptible).
   */
  private void aggregate(List<String> keys, ServerResponse res) throws InterruptedException {
    try {
      JsonArrayBuilder values = Json.createArrayBuilder();
      FanOut.perRequest(keys, this::value).forEach(values::add);
      json(res, 200, values.build());
    } catch (FanOut.Failed e) {
      downstreamFailed(e.getCause(), res);
    }
  }

  /** The downstream's value for a checked key: a blocking call on this virtual thread. */
  private String value(String key) throws IOException {
    try (HttpClientResponse r = client.get("/value").queryParam("key", key).request()) {
      if (r.status().code() / 100 != 2) {
        throw new Downstream.StatusException(r.status().code());
      }
      return r.as(String.class);
    }
  }

  /** 504 for a call that passed the read timeout, 502 for any other failure. */
  private void downstreamFailed(Throwable e, ServerResponse res) {
    if (timedOut(e)) {
      text(res, 504, downstream.timedOutText());
    } else if (e instanceof Downstream.StatusException) {
      text(res, 502, e.getMessage());
    } else {
      text(res, 502, Downstream.failedText(e.getMessage()));
    }
  }

  /**
   * Helidon's client reports a read timeout as an UncheckedIOException around
   * SocketTimeoutException.
   */
  private static boolean timedOut(Throwable e) {
    for (Throwable t = e; t != null; t = t.getCause()) {
      if (t instanceof SocketTimeoutException) {
        return true;
      }
    }
    return false;
  }

  private void list(int limit, ServerResponse res) throws SQLException {
    JsonArrayBuilder rows = Json.createArrayBuilder();
    try (Connection c = pool.getConnection();
        PreparedStatement st = c.prepareStatement(Database.jdbc(Database.LIST))) {
      st.setInt(1, limit);
      try (ResultSet rs = st.executeQuery()) {
        while (rs.next()) {
          rows.add(row(rs));
        }
      }
    }
    json(res, 200, rows.build());
  }

  private void delete(long id, ServerResponse res) throws SQLException {
    int n;
    try (Connection c = pool.getConnection();
        PreparedStatement st = c.prepareStatement(Database.jdbc(Database.DELETE))) {
      st.setLong(1, id);
      n = st.executeUpdate();
    }
    if (n == 0) {
      text(res, 404, "no such message");
    } else {
      res.status(204).send();
    }
  }

  private interface Binder {
    void bind(PreparedStatement st) throws SQLException;
  }

  /** Runs a statement that returns at most one message. */
  private JsonObject one(String sql, Binder binder) throws SQLException {
    try (Connection c = pool.getConnection();
        PreparedStatement st = c.prepareStatement(Database.jdbc(sql))) {
      binder.bind(st);
      try (ResultSet rs = st.executeQuery()) {
        return rs.next() ? row(rs) : null;
      }
    }
  }

  private static JsonObject row(ResultSet rs) throws SQLException {
    return Json.createObjectBuilder().add("id", rs.getLong(1)).add("text", rs.getString(2)).build();
  }

  private static long id(ServerRequest req) {
    return Contract.messageId(req.path().pathParameters().first("id").orElse(null));
  }

  /** The validated text of a create/update body, parsed with JSON-P (Parsson). */
  private static String text(ServerRequest req) {
    long length = req.headers().contentLength().orElse(0);
    if (length > Contract.MAX_BODY_BYTES) {
      throw new TooLarge();
    }
    if (!req.content().hasEntity()) {
      throw new BadRequest("body must be a JSON object with \"text\"");
    }
    String body = req.content().as(String.class);
    if (body.length() > Contract.MAX_BODY_BYTES) {
      throw new TooLarge();
    }
    JsonStructure parsed;
    try (JsonReader reader = Json.createReader(new StringReader(body))) {
      parsed = reader.read();
    } catch (JsonException | IllegalStateException e) {
      throw new BadRequest("body is not valid JSON");
    } catch (RuntimeException e) {
      // Parsson refuses nesting deeper than 1,000 with a plain RuntimeException.
      throw new BadRequest("body is not valid JSON: " + e.getMessage());
    }
    if (!(parsed instanceof JsonObject object)) {
      throw new BadRequest("body must be a JSON object with \"text\"");
    }
    JsonValue text = object.get("text");
    return Contract.messageText(text instanceof JsonString s ? s.getString() : null);
  }

  private static String param(ServerRequest req, String name) {
    return req.query().first(name).orElse(null);
  }

  /** A body over Contract.MAX_BODY_BYTES: 413. */
  private static final class TooLarge extends RuntimeException {
    TooLarge() {
      super("body over " + Contract.MAX_BODY_BYTES + " bytes", null, false, false);
    }
  }

  private static void answer(ServerResponse res, int status, JsonObject message) {
    if (message == null) {
      text(res, 404, "no such message");
    } else {
      json(res, status, message);
    }
  }

  private static void json(ServerResponse res, int status, JsonValue value) {
    res.status(status).header(HeaderNames.CONTENT_TYPE, "application/json").send(value.toString());
  }

  private static void text(ServerResponse res, int status, String body) {
    res.status(status).header(HeaderNames.CONTENT_TYPE, "text/plain;charset=utf-8").send(body);
  }

  public static void main(String[] argv) {
    Args args = new Args(argv);
    HelidonApp app = new HelidonApp(Database.fromEnvironment());
    WebServer server =
        WebServer.builder()
            .host(args.address())
            .port(args.getInt("port", 8080))
            .backlog(args.getInt("backlog", 4096))
            // Above the contract's 64 KiB Helidon answers 413 before reading the body.
            .maxPayloadSize(Contract.MAX_BODY_BYTES)
            // 0 (Helidon's default): a response is written by the request's own virtual thread;
            // above 0 a writer thread per connection takes queued responses.
            .writeQueueLength(args.getInt("write-queue-length", 0))
            .routing(app::routing)
            .build()
            .start();
    System.out.println("helidon listening on " + args.address() + ":" + server.port());
    new RuntimeReport(
            "carrier threads of the virtual-thread scheduler (a virtual thread per request)",
            RuntimeReport.virtualThreadParallelism())
        .print();
  }
}
