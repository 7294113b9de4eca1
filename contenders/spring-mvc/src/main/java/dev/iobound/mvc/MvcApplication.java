package dev.iobound.mvc;

import dev.iobound.common.BadRequest;
import dev.iobound.common.Contract;
import dev.iobound.common.Corpus;
import dev.iobound.common.Database;
import dev.iobound.common.Downstream;
import dev.iobound.common.FanOut;
import dev.iobound.common.RuntimeReport;
import java.io.IOException;
import java.net.http.HttpClient;
import java.net.http.HttpTimeoutException;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.context.event.ApplicationReadyEvent;
import org.springframework.context.event.EventListener;
import org.springframework.core.env.Environment;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.MediaTypeFactory;
import org.springframework.http.ResponseEntity;
import org.springframework.http.client.JdkClientHttpRequestFactory;
import org.springframework.jdbc.core.RowMapper;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.web.bind.annotation.DeleteMapping;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.PutMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.client.RestClient;
import org.springframework.web.client.RestClientException;
import org.springframework.web.client.RestClientResponseException;

/**
 * Thread-per-request: each request holds its worker thread for its whole life, waits included
 * (Tomcat platform threads, or virtual threads with spring.threads.virtual.enabled=true).
 */
@SpringBootApplication
@RestController
public class MvcApplication {
  private final Corpus corpus = Corpus.fromEnvironment();
  private final Downstream downstream = Downstream.fromEnvironment();
  private final RestClient client;
  private final JdbcClient jdbc;

  /** The fan-out's calls on platform threads; null on virtual threads (an executor per request). */
  private final ExecutorService fanoutPool;

  /** A row of messages, written as {"id":..,"text":..}. */
  public record Message(long id, String text) {}

  private static final RowMapper<Message> ROW =
      (rs, n) -> new Message(rs.getLong(1), rs.getString(2));

  public MvcApplication(
      JdbcClient jdbc,
      @Value("${spring.threads.virtual.enabled:false}") boolean virtual,
      @Value("${iobound.fanout-threads:64}") int fanoutThreads) {
    // Blocking JDBC on the request's thread; HikariCP hands out the connections.
    this.jdbc = jdbc;
    // RestClient over the JDK HttpClient (keep-alive pool); the read timeout bounds the call.
    // On virtual threads the client's own tasks run on virtual threads too, so that the
    // thread count shows the model rather than the client's default platform pool.
    HttpClient.Builder http = HttpClient.newBuilder().connectTimeout(downstream.timeout());
    if (virtual) {
      http.executor(Executors.newVirtualThreadPerTaskExecutor());
    }
    JdkClientHttpRequestFactory factory = new JdkClientHttpRequestFactory(http.build());
    factory.setReadTimeout(downstream.timeout());
    client = RestClient.builder().requestFactory(factory).build();
    fanoutPool = virtual ? null : Executors.newFixedThreadPool(fanoutThreads);
    // Initialised here, at start-up, not by the first request that needs it: its class
    // initialiser reads mime.types from the nested jar. Run by a request on a virtual thread,
    // it pins the only carrier (class initialisers still pin on JDK 25) while it waits for the
    // jar's lock held by another, unmounted virtual thread: the server stopped answering under
    // the conformance fuzz, 1,600 virtual threads runnable and none running.
    MediaTypeFactory.getMediaType("iobound.txt");
  }

  public static void main(String[] args) {
    SpringApplication.run(MvcApplication.class, args);
  }

  /** The contract's start-up line: the CPUs the JVM saw and what serves the requests. */
  @EventListener(ApplicationReadyEvent.class)
  public void reportRuntime(ApplicationReadyEvent ready) {
    Environment env = ready.getApplicationContext().getEnvironment();
    // Spring Boot's default for server.tomcat.threads.max.
    int poolMax = env.getProperty("server.tomcat.threads.max", Integer.class, 200);
    RuntimeReport report =
        env.getProperty("spring.threads.virtual.enabled", Boolean.class, false)
            ? new RuntimeReport(
                "carrier threads of the virtual-thread scheduler (a virtual thread per request)",
                RuntimeReport.virtualThreadParallelism())
            : new RuntimeReport("Tomcat worker threads (max)", poolMax);
    report.print();
  }

  @GetMapping(value = "/plaintext", produces = MediaType.TEXT_PLAIN_VALUE)
  public String plaintext() {
    return Contract.PLAINTEXT;
  }

  @GetMapping(value = "/delay", produces = MediaType.TEXT_PLAIN_VALUE)
  public String delay(@RequestParam(name = "ms", required = false) String ms)
      throws InterruptedException {
    long millis = Contract.delayMs(ms);
    Thread.sleep(millis); // blocks the worker thread: that is the model under test
    return Long.toString(millis);
  }

  @GetMapping(value = "/hash", produces = MediaType.TEXT_PLAIN_VALUE)
  public String hash(
      @RequestParam(name = "id", required = false) String id,
      @RequestParam(name = "delayMs", required = false) String delayMs)
      throws InterruptedException, IOException {
    int file = Contract.hashId(id, corpus.files());
    Thread.sleep(Contract.hashDelayMs(delayMs));
    return corpus.hash(file); // blocking read on this request's thread
  }

  @GetMapping(value = "/enrich", produces = MediaType.TEXT_PLAIN_VALUE)
  public ResponseEntity<String> enrich(@RequestParam(name = "key", required = false) String raw) {
    String key = Contract.enrichKey(raw);
    long start = System.nanoTime();
    try {
      return text(HttpStatus.OK, Downstream.enriched(key, value(key)));
    } catch (RestClientException e) {
      return downstreamFailed(e, start);
    }
  }

  /**
   * The fan-out: on platform threads, CompletableFuture over a bounded pool shared by all requests
   * (a failure answers at once; the other calls finish on the pool, as a CompletableFuture's cancel
   * does not interrupt); on virtual threads, an executor per request whose calls are interrupted
   * when one fails.
   */
  @GetMapping(value = "/aggregate", produces = MediaType.APPLICATION_JSON_VALUE)
  public ResponseEntity<?> aggregate(@RequestParam(name = "keys", required = false) String raw)
      throws InterruptedException {
    List<String> keys = Contract.aggregateKeys(raw);
    long start = System.nanoTime();
    try {
      List<String> values =
          fanoutPool == null
              ? FanOut.perRequest(keys, this::value)
              : FanOut.onPool(keys, fanoutPool, this::value);
      return ResponseEntity.ok(values);
    } catch (FanOut.Failed e) {
      return e.getCause() instanceof RestClientException r
          ? downstreamFailed(r, start)
          : text(HttpStatus.BAD_GATEWAY, Downstream.failedText(e.getCause()));
    }
  }

  /** The downstream's value for a checked key: a blocking call on this thread. */
  private String value(String key) {
    return client.get().uri(downstream.valueUri(key)).retrieve().body(String.class);
  }

  /** 502 for a failed or refused call, 504 for one that passed the timeout. */
  private ResponseEntity<String> downstreamFailed(RestClientException e, long start) {
    if (e instanceof RestClientResponseException r) {
      return text(HttpStatus.BAD_GATEWAY, Downstream.answeredText(r.getStatusCode().value()));
    }
    // The read timeout closes the response stream: a failure reading the body once the
    // timeout has passed is a timeout too, whatever exception reports it.
    boolean timeout =
        e.getCause() instanceof HttpTimeoutException
            || System.nanoTime() - start >= downstream.timeout().toNanos();
    return timeout
        ? text(HttpStatus.GATEWAY_TIMEOUT, downstream.timedOutText())
        : text(HttpStatus.BAD_GATEWAY, Downstream.failedText(e.getMessage()));
  }

  @GetMapping("/messages")
  public List<Message> listMessages(@RequestParam(name = "limit", required = false) String limit) {
    return jdbc.sql(Database.jdbc(Database.LIST))
        .param(Contract.messageLimit(limit))
        .query(ROW)
        .list();
  }

  @GetMapping("/messages/{id}")
  public ResponseEntity<?> getMessage(@PathVariable("id") String id) {
    return found(
        jdbc.sql(Database.jdbc(Database.GET))
            .param(Contract.messageId(id))
            .query(ROW)
            .optional()
            .orElse(null),
        HttpStatus.OK);
  }

  @PostMapping("/messages")
  public ResponseEntity<?> createMessage(@RequestBody Map<String, Object> body) {
    String text = Contract.messageText(body.get("text"));
    return found(
        jdbc.sql(Database.jdbc(Database.CREATE)).param(text).query(ROW).single(),
        HttpStatus.CREATED);
  }

  @PutMapping("/messages/{id}")
  public ResponseEntity<?> updateMessage(
      @PathVariable("id") String id, @RequestBody Map<String, Object> body) {
    long key = Contract.messageId(id);
    String text = Contract.messageText(body.get("text"));
    return found(
        jdbc.sql(Database.jdbc(Database.UPDATE))
            .param(text)
            .param(key)
            .query(ROW)
            .optional()
            .orElse(null),
        HttpStatus.OK);
  }

  @DeleteMapping("/messages/{id}")
  public ResponseEntity<?> deleteMessage(@PathVariable("id") String id) {
    int deleted = jdbc.sql(Database.jdbc(Database.DELETE)).param(Contract.messageId(id)).update();
    return deleted == 0
        ? text(HttpStatus.NOT_FOUND, "no such message")
        : ResponseEntity.noContent().build();
  }

  private static ResponseEntity<?> found(Message m, HttpStatus status) {
    return m == null
        ? text(HttpStatus.NOT_FOUND, "no such message")
        : ResponseEntity.status(status).body(m);
  }

  private static ResponseEntity<String> text(HttpStatus status, String body) {
    return ResponseEntity.status(status).contentType(MediaType.TEXT_PLAIN).body(body);
  }

  @ExceptionHandler(BadRequest.class)
  public ResponseEntity<String> badRequest(BadRequest e) {
    return text(HttpStatus.BAD_REQUEST, e.getMessage());
  }
}
