package dev.iobound.webflux;

import dev.iobound.common.BadRequest;
import dev.iobound.common.Contract;
import dev.iobound.common.Corpus;
import dev.iobound.common.Database;
import dev.iobound.common.Downstream;
import dev.iobound.common.RuntimeReport;
import io.r2dbc.spi.Readable;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeoutException;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.context.event.ApplicationReadyEvent;
import org.springframework.context.event.EventListener;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.http.client.reactive.ReactorClientHttpConnector;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.web.bind.annotation.DeleteMapping;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.PutMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.reactive.function.client.WebClient;
import org.springframework.web.reactive.function.client.WebClientResponseException;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import reactor.netty.http.client.HttpClient;
import reactor.netty.resources.LoopResources;

/**
 * Event loop: a few Netty threads serve every connection; waiting is a timer, the downstream call
 * is non-blocking (WebClient on Reactor Netty), and file reads run on Reactor's bounded elastic
 * pool so the loop never blocks.
 */
@SpringBootApplication
@RestController
public class WebfluxApplication {
  private final Corpus corpus = Corpus.fromEnvironment();
  private final Downstream downstream = Downstream.fromEnvironment();
  private final WebClient client;
  private final DatabaseClient db;

  /** A row of messages, written as {"id":..,"text":..}. */
  public record Message(long id, String text) {}

  private static Message row(Readable r) {
    return new Message(r.get(0, Long.class), r.get(1, String.class));
  }

  public WebfluxApplication(DatabaseClient db) {
    // Non-blocking R2DBC: the event loop never waits for PostgreSQL.
    this.db = db;
    // Reactor Netty's pooled client; responseTimeout bounds the wait for the answer.
    HttpClient http = HttpClient.create().responseTimeout(downstream.timeout());
    client = WebClient.builder().clientConnector(new ReactorClientHttpConnector(http)).build();
  }

  public static void main(String[] args) {
    SpringApplication.run(WebfluxApplication.class, args);
  }

  /** The contract's start-up line: the CPUs the JVM saw and the loops and pools it made. */
  @EventListener(ApplicationReadyEvent.class)
  public void reportRuntime() {
    new RuntimeReport("Reactor Netty event loops", LoopResources.DEFAULT_IO_WORKER_COUNT)
        .with("parallel_scheduler", Schedulers.DEFAULT_POOL_SIZE)
        .with("bounded_elastic_max", Schedulers.DEFAULT_BOUNDED_ELASTIC_SIZE)
        .print();
  }

  @GetMapping(value = "/plaintext", produces = MediaType.TEXT_PLAIN_VALUE)
  public Mono<String> plaintext() {
    return Mono.just(Contract.PLAINTEXT);
  }

  @GetMapping(value = "/delay", produces = MediaType.TEXT_PLAIN_VALUE)
  public Mono<String> delay(@RequestParam(name = "ms", required = false) String ms) {
    long millis = Contract.delayMs(ms);
    return Mono.delay(Duration.ofMillis(millis)).thenReturn(Long.toString(millis));
  }

  @GetMapping(value = "/hash", produces = MediaType.TEXT_PLAIN_VALUE)
  public Mono<String> hash(
      @RequestParam(name = "id", required = false) String id,
      @RequestParam(name = "delayMs", required = false) String delayMs) {
    int file = Contract.hashId(id, corpus.files());
    long wait = Contract.hashDelayMs(delayMs);
    return Mono.delay(Duration.ofMillis(wait))
        .then(Mono.fromCallable(() -> corpus.hash(file)).subscribeOn(Schedulers.boundedElastic()));
  }

  @GetMapping(value = "/enrich", produces = MediaType.TEXT_PLAIN_VALUE)
  public Mono<ResponseEntity<String>> enrich(
      @RequestParam(name = "key", required = false) String raw) {
    String key = Contract.enrichKey(raw);
    return value(key)
        .map(value -> text(HttpStatus.OK, Downstream.enriched(key, value)))
        .onErrorResume(e -> Mono.just(failure(e)));
  }

  /**
   * The fan-out: Mono.zip of one WebClient call per key, subscribed to at once; the first error
   * cancels the other subscriptions, and Reactor Netty closes a cancelled call's connection.
   */
  @GetMapping(value = "/aggregate", produces = MediaType.APPLICATION_JSON_VALUE)
  public Mono<ResponseEntity<?>> aggregate(
      @RequestParam(name = "keys", required = false) String raw) {
    List<Mono<String>> calls = Contract.aggregateKeys(raw).stream().map(this::value).toList();
    return Mono.zip(calls, values -> Arrays.stream(values).map(String.class::cast).toList())
        .<ResponseEntity<?>>map(ResponseEntity::ok)
        .onErrorResume(e -> Mono.just(failure(e)));
  }

  /** The downstream's value for a checked key. */
  private Mono<String> value(String key) {
    return client
        .get()
        .uri(downstream.valueUri(key))
        .retrieve()
        .bodyToMono(String.class)
        .timeout(downstream.timeout());
  }

  private ResponseEntity<String> failure(Throwable e) {
    for (Throwable t = e; t != null; t = t.getCause()) {
      if (t instanceof TimeoutException
          || t instanceof io.netty.handler.timeout.ReadTimeoutException) {
        return text(HttpStatus.GATEWAY_TIMEOUT, downstream.timedOutText());
      }
    }
    if (e instanceof WebClientResponseException r) {
      return text(HttpStatus.BAD_GATEWAY, Downstream.answeredText(r.getStatusCode().value()));
    }
    return text(HttpStatus.BAD_GATEWAY, Downstream.failedText(e.getMessage()));
  }

  @GetMapping("/messages")
  public Mono<List<Message>> listMessages(
      @RequestParam(name = "limit", required = false) String limit) {
    return db.sql(Database.LIST)
        .bind(0, Contract.messageLimit(limit))
        .map(WebfluxApplication::row)
        .all()
        .collectList();
  }

  @GetMapping("/messages/{id}")
  public Mono<ResponseEntity<?>> getMessage(@PathVariable("id") String id) {
    return found(
        db.sql(Database.GET).bind(0, Contract.messageId(id)).map(WebfluxApplication::row).one(),
        HttpStatus.OK);
  }

  @PostMapping("/messages")
  public Mono<ResponseEntity<?>> createMessage(@RequestBody Map<String, Object> body) {
    String text = Contract.messageText(body.get("text"));
    return found(
        db.sql(Database.CREATE).bind(0, text).map(WebfluxApplication::row).one(),
        HttpStatus.CREATED);
  }

  @PutMapping("/messages/{id}")
  public Mono<ResponseEntity<?>> updateMessage(
      @PathVariable("id") String id, @RequestBody Map<String, Object> body) {
    long key = Contract.messageId(id);
    String text = Contract.messageText(body.get("text"));
    return found(
        db.sql(Database.UPDATE).bind(0, text).bind(1, key).map(WebfluxApplication::row).one(),
        HttpStatus.OK);
  }

  @DeleteMapping("/messages/{id}")
  public Mono<ResponseEntity<?>> deleteMessage(@PathVariable("id") String id) {
    return db.sql(Database.DELETE)
        .bind(0, Contract.messageId(id))
        .fetch()
        .rowsUpdated()
        .map(
            n ->
                n == 0
                    ? text(HttpStatus.NOT_FOUND, "no such message")
                    : ResponseEntity.noContent().build());
  }

  private static Mono<ResponseEntity<?>> found(Mono<Message> m, HttpStatus status) {
    return m.<ResponseEntity<?>>map(x -> ResponseEntity.status(status).body(x))
        .defaultIfEmpty(text(HttpStatus.NOT_FOUND, "no such message"));
  }

  private static ResponseEntity<String> text(HttpStatus status, String body) {
    return ResponseEntity.status(status).contentType(MediaType.TEXT_PLAIN).body(body);
  }

  @ExceptionHandler(BadRequest.class)
  public ResponseEntity<String> badRequest(BadRequest e) {
    return text(HttpStatus.BAD_REQUEST, e.getMessage());
  }
}
