package dev.iobound.jetty;

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
import java.io.IOException;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.Fields;
import org.eclipse.jetty.util.thread.QueuedThreadPool;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * Thread-per-request on Jetty 12 (core handler API, no servlet layer). A blocking handler: each
 * request holds a pool thread while it waits. With --virtual=true Jetty runs the same blocking
 * handler on virtual threads (QueuedThreadPool#setVirtualThreadsExecutor), keeping its platform
 * threads for the selectors.
 */
public final class JettyApp extends Handler.Abstract {

  private final Corpus corpus = Corpus.fromEnvironment();
  private final Downstream downstream = Downstream.fromEnvironment();

  /**
   * The JDK's HttpClient (keep-alive pool), called blocking from the request's thread; with virtual
   * threads its own tasks run on virtual threads too, so the thread count shows the model.
   */
  private final HttpClient client;

  private static final JsonMapper JSON = JsonMapper.builder().build();

  /** /messages: blocking JDBC on the request's thread, connections from HikariCP. */
  private final HikariDataSource pool;

  /** The fan-out's calls on platform threads; null on virtual threads (an executor per request). */
  private final ExecutorService fanoutPool;

  JettyApp(Database db, boolean virtual, int fanoutThreads) {
    fanoutPool = virtual ? null : Executors.newFixedThreadPool(fanoutThreads);
    HttpClient.Builder http = HttpClient.newBuilder().connectTimeout(downstream.timeout());
    if (virtual) {
      http.executor(Executors.newVirtualThreadPerTaskExecutor());
    }
    client = http.build();
    pool = JdbcPool.of(db);
  }

  @Override
  public boolean handle(Request request, Response response, Callback callback) throws Exception {
    try {
      switch (Request.getPathInContext(request)) {
        case "/plaintext" -> send(response, callback, 200, Contract.PLAINTEXT);
        case "/delay" -> {
          long ms = Contract.delayMs(query(request).getValue("ms"));
          Thread.sleep(ms); // blocks this request's thread: the model under test
          send(response, callback, 200, Long.toString(ms));
        }
        case "/hash" -> {
          Fields q = query(request);
          int id = Contract.hashId(q.getValue("id"), corpus.files());
          Thread.sleep(Contract.hashDelayMs(q.getValue("delayMs")));
          send(response, callback, 200, corpus.hash(id)); // blocking read on this thread
        }
        case "/enrich" ->
            enrich(Contract.enrichKey(query(request).getValue("key")), response, callback);
        case "/aggregate" ->
            aggregate(Contract.aggregateKeys(query(request).getValue("keys")), response, callback);
        case "/messages" -> messages(request, response, callback);
        default -> {
          String path = Request.getPathInContext(request);
          if (path.startsWith("/messages/")) {
            message(
                request,
                Contract.messageId(path.substring("/messages/".length())),
                response,
                callback);
          } else {
            send(response, callback, 404, "not found");
          }
        }
      }
    } catch (BadRequest e) {
      send(response, callback, 400, e.getMessage());
    } catch (TooLarge e) {
      send(response, callback, 413, e.getMessage());
    }
    return true;
  }

  private void enrich(String key, Response response, Callback callback)
      throws InterruptedException {
    try {
      send(response, callback, 200, Downstream.enriched(key, value(key)));
    } catch (IOException e) {
      downstreamFailed(e, response, callback);
    }
  }

  /**
   * The fan-out: on platform threads, CompletableFuture over a bounded pool shared by all requests
   * (a failure answers at once; the other calls finish on the pool); on virtual threads, an
   * executor per request whose calls are interrupted when one fails.
   */
  private void aggregate(List<String> keys, Response response, Callback callback)
      throws InterruptedException {
    try {
      List<String> values =
          fanoutPool == null
              ? FanOut.perRequest(keys, this::value)
              : FanOut.onPool(keys, fanoutPool, this::value);
      json(response, callback, 200, values);
    } catch (FanOut.Failed e) {
      downstreamFailed(e.getCause(), response, callback);
    }
  }

  /** The downstream's value for a checked key: a blocking call on this thread. */
  private String value(String key) throws IOException, InterruptedException {
    HttpRequest req =
        HttpRequest.newBuilder(downstream.valueUri(key))
            .timeout(downstream.timeout())
            .GET()
            .build();
    HttpResponse<String> r = client.send(req, HttpResponse.BodyHandlers.ofString());
    if (r.statusCode() / 100 != 2) {
      throw new Downstream.StatusException(r.statusCode());
    }
    return r.body();
  }

  /** 504 for a call that passed the timeout, 502 for any other failure. */
  private void downstreamFailed(Throwable e, Response response, Callback callback) {
    if (e instanceof HttpTimeoutException) {
      send(response, callback, 504, downstream.timedOutText());
    } else if (e instanceof Downstream.StatusException) {
      send(response, callback, 502, e.getMessage());
    } else {
      send(response, callback, 502, Downstream.failedText(e.getMessage()));
    }
  }

  /** GET /messages?limit=N and POST /messages. */
  private void messages(Request request, Response response, Callback callback)
      throws IOException, SQLException {
    switch (request.getMethod()) {
      case "GET" -> {
        int limit = Contract.messageLimit(query(request).getValue("limit"));
        try (Connection c = pool.getConnection();
            PreparedStatement st = c.prepareStatement(Database.jdbc(Database.LIST))) {
          st.setInt(1, limit);
          List<Object> rows = new ArrayList<>();
          try (ResultSet rs = st.executeQuery()) {
            while (rs.next()) {
              rows.add(row(rs));
            }
          }
          json(response, callback, 200, rows);
        }
      }
      case "POST" -> {
        String text = text(request);
        answer(response, callback, 201, run(Database.CREATE, st -> st.setString(1, text)));
      }
      default -> send(response, callback, 405, "use GET or POST");
    }
  }

  /** GET, PUT and DELETE /messages/{id}. */
  private void message(Request request, long id, Response response, Callback callback)
      throws IOException, SQLException {
    switch (request.getMethod()) {
      case "GET" -> answer(response, callback, 200, run(Database.GET, st -> st.setLong(1, id)));
      case "PUT" -> {
        String text = text(request);
        answer(
            response,
            callback,
            200,
            run(
                Database.UPDATE,
                st -> {
                  st.setString(1, text);
                  st.setLong(2, id);
                }));
      }
      case "DELETE" -> {
        int n;
        try (Connection c = pool.getConnection();
            PreparedStatement st = c.prepareStatement(Database.jdbc(Database.DELETE))) {
          st.setLong(1, id);
          n = st.executeUpdate();
        }
        if (n == 0) {
          send(response, callback, 404, "no such message");
        } else {
          response.setStatus(204);
          callback.succeeded();
        }
      }
      default -> send(response, callback, 405, "use GET, PUT or DELETE");
    }
  }

  private interface Binder {
    void bind(PreparedStatement st) throws SQLException;
  }

  /** Runs a statement that returns at most one message. */
  private Map<String, Object> run(String sql, Binder binder) throws SQLException {
    try (Connection c = pool.getConnection();
        PreparedStatement st = c.prepareStatement(Database.jdbc(sql))) {
      binder.bind(st);
      try (ResultSet rs = st.executeQuery()) {
        return rs.next() ? row(rs) : null;
      }
    }
  }

  private static Map<String, Object> row(ResultSet rs) throws SQLException {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("id", rs.getLong(1));
    m.put("text", rs.getString(2));
    return m;
  }

  /** The validated text of a create/update body, parsed with Jackson. */
  private static String text(Request request) throws IOException {
    if (request.getLength() > Contract.MAX_BODY_BYTES) {
      throw new TooLarge();
    }
    String body = Content.Source.asString(request, StandardCharsets.UTF_8);
    if (body.length() > Contract.MAX_BODY_BYTES) {
      throw new TooLarge();
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
    return Contract.messageText(text != null && text.isString() ? text.asString() : null);
  }

  /** A body over Contract.MAX_BODY_BYTES: 413. */
  private static final class TooLarge extends RuntimeException {
    TooLarge() {
      super("body over " + Contract.MAX_BODY_BYTES + " bytes", null, false, false);
    }
  }

  private static void answer(
      Response response, Callback callback, int status, Map<String, Object> message) {
    if (message == null) {
      send(response, callback, 404, "no such message");
    } else {
      json(response, callback, status, message);
    }
  }

  private static void json(Response response, Callback callback, int status, Object value) {
    response.setStatus(status);
    response.getHeaders().put(HttpHeader.CONTENT_TYPE, "application/json");
    Content.Sink.write(response, true, JSON.writeValueAsString(value), callback);
  }

  private static Fields query(Request request) {
    return Request.extractQueryParameters(request);
  }

  private static void send(Response response, Callback callback, int status, String body) {
    response.setStatus(status);
    response.getHeaders().put(HttpHeader.CONTENT_TYPE, "text/plain;charset=utf-8");
    Content.Sink.write(response, true, body, callback);
  }

  public static void main(String[] argv) throws Exception {
    Args args = new Args(argv);
    QueuedThreadPool pool = new QueuedThreadPool(args.getInt("threads", 200));
    pool.setName("jetty");
    boolean virtual = Boolean.parseBoolean(args.get("virtual", "false"));
    if (virtual) {
      pool.setVirtualThreadsExecutor(Executors.newVirtualThreadPerTaskExecutor());
    }
    Server server = new Server(pool);
    ServerConnector connector = new ServerConnector(server);
    connector.setHost(args.address());
    connector.setPort(args.getInt("port", 8080));
    connector.setAcceptQueueSize(args.getInt("backlog", 4096));
    server.addConnector(connector);
    server.setHandler(
        new JettyApp(Database.fromEnvironment(), virtual, args.getInt("fanout-threads", 64)));
    server.start();
    RuntimeReport report =
        virtual
            ? new RuntimeReport(
                "carrier threads of the virtual-thread scheduler (a virtual thread per request)",
                RuntimeReport.virtualThreadParallelism())
            : new RuntimeReport("QueuedThreadPool threads (max)", pool.getMaxThreads());
    report.with("pool_threads_max", pool.getMaxThreads()).print();
    server.join();
  }
}
