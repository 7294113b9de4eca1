package dev.iobound.pipeline;

import com.sun.net.httpserver.HttpServer;
import dev.iobound.common.Args;
import dev.iobound.common.Contract;
import dev.iobound.common.Downstream;
import dev.iobound.common.KafkaPipeline;
import dev.iobound.common.RuntimeReport;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.http.PoolOptions;
import io.vertx.ext.web.client.WebClient;
import io.vertx.ext.web.client.WebClientOptions;
import java.net.InetSocketAddress;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;

/**
 * Kafka consume -> enrich over HTTP -> produce, in three models:
 *
 * <ul>
 *   <li>{@code threadpool}: the poll loop hands each record to a fixed ExecutorService whose thread
 *       makes a blocking HTTP call (JDK HttpClient) and hands the enriched record to the producer;
 *   <li>{@code virtual}: the same code on a virtual-thread-per-task executor;
 *   <li>{@code reactive}: each record's call is a non-blocking Vert.x WebClient request whose
 *       completion produces the enriched record asynchronously; no thread waits for the downstream.
 * </ul>
 *
 * <p>In every model the produce is asynchronous (KafkaProducer batches it with its neighbours) and
 * a polled batch is committed only after each of its records has been produced and acknowledged by
 * the broker (at-least-once): the blocking models wait for their calls, flush the producer and
 * check every send before committing. The pool (threads or connections) is as large as a polled
 * batch, so no record of a batch waits for another's call to end. The record key is the downstream
 * key; the output value is the input value, a comma and the downstream's answer (or "!failed").
 */
public final class Pipeline {
  static final String IN = KafkaPipeline.IN;
  static final String OUT = KafkaPipeline.OUT;
  static final String FAILED = KafkaPipeline.FAILED;

  private final Downstream downstream = Downstream.fromEnvironment();
  private final KafkaProducer<String, String> producer;
  private final ExecutorService executor;
  private final HttpClient http;
  private final WebClient web;
  private volatile boolean assigned;

  Pipeline(String mode, String bootstrap, int poolSize) {
    // poolSize threads (threadpool) or connections (reactive): sized with max.poll.records.
    producer = new KafkaProducer<>(producerProperties(bootstrap, 5));
    switch (mode) {
      case "threadpool" -> executor = Executors.newFixedThreadPool(poolSize);
      case "virtual" -> executor = Executors.newVirtualThreadPerTaskExecutor();
      case "reactive" -> executor = null;
      default ->
          throw new IllegalArgumentException(
              "--mode must be threadpool, virtual or reactive, got " + mode);
    }
    // The JDK HttpClient runs its own work on a cached pool of platform threads unless told
    // otherwise; on virtual threads it gets the virtual-thread executor, so that the
    // variant holds no platform thread per call in flight.
    HttpClient.Builder hb = HttpClient.newBuilder().connectTimeout(downstream.timeout());
    if (mode.equals("virtual")) {
      hb.executor(executor);
    }
    http = executor == null ? null : hb.build();
    web =
        executor == null
            ? WebClient.create(
                Vertx.vertx(),
                new WebClientOptions().setKeepAlive(true),
                new PoolOptions().setHttp1MaxSize(poolSize))
            : null;
  }

  /** A String producer that waits for every replica (acks=all), batching up to `lingerMs`. */
  static Properties producerProperties(String bootstrap, int lingerMs) {
    return KafkaPipeline.producerProperties(bootstrap, lingerMs);
  }

  /**
   * Blocking call: the calling thread waits for the downstream, then hands the enriched record to
   * the producer without waiting for the broker (the poll loop flushes and checks the sends).
   */
  private Future<RecordMetadata> processBlocking(ConsumerRecord<String, String> r) {
    String enriched;
    try {
      HttpRequest req =
          HttpRequest.newBuilder(downstream.valueUri(Contract.enrichKey(r.key())))
              .timeout(downstream.timeout())
              .GET()
              .build();
      HttpResponse<String> resp = http.send(req, HttpResponse.BodyHandlers.ofString());
      enriched = resp.statusCode() / 100 == 2 ? resp.body() : FAILED;
    } catch (java.io.IOException | RuntimeException e) {
      enriched = FAILED;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      enriched = FAILED;
    }
    return producer.send(new ProducerRecord<>(OUT, r.key(), r.value() + "," + enriched));
  }

  /** Non-blocking: completes when the enriched record is acknowledged by the broker. */
  private CompletableFuture<Void> processAsync(ConsumerRecord<String, String> r) {
    CompletableFuture<Void> done = new CompletableFuture<>();
    web.getAbs(downstream.valueUri(Contract.enrichKey(r.key())).toString())
        .timeout(downstream.timeout().toMillis())
        .send()
        .onComplete(
            ar -> {
              String enriched =
                  ar.succeeded() && ar.result().statusCode() / 100 == 2
                      ? ar.result().bodyAsString()
                      : FAILED;
              producer.send(
                  new ProducerRecord<>(OUT, r.key(), r.value() + "," + enriched),
                  (meta, e) -> {
                    if (e == null) {
                      done.complete(null);
                    } else {
                      done.completeExceptionally(e);
                    }
                  });
            });
    return done;
  }

  void run(String bootstrap, int maxPoll) throws Exception {
    Properties c = new Properties();
    c.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    // A group of its own per process: a stopped contender's member would otherwise hold
    // its partitions until its session times out (45 s), and the next contender would wait.
    c.put(ConsumerConfig.GROUP_ID_CONFIG, "iobound-pipeline-" + ProcessHandle.current().pid());
    c.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
    c.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "latest");
    c.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, Integer.toString(maxPoll));
    c.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
    c.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
    try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(c)) {
      consumer.subscribe(
          List.of(IN),
          new ConsumerRebalanceListener() {
            @Override
            public void onPartitionsRevoked(Collection<TopicPartition> partitions) {}

            @Override
            public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
              // Start at the end, resolved now: whatever the harness sends once this
              // contender reports ready is consumed, and nothing older is.
              consumer.seekToEnd(partitions);
              partitions.forEach(consumer::position);
              assigned = !partitions.isEmpty();
            }
          });
      while (true) {
        ConsumerRecords<String, String> batch = consumer.poll(Duration.ofMillis(100));
        if (batch.isEmpty()) {
          continue;
        }
        if (executor != null) {
          List<Future<Future<RecordMetadata>>> calls = new ArrayList<>(batch.count());
          for (ConsumerRecord<String, String> r : batch) {
            calls.add(executor.submit(() -> processBlocking(r)));
          }
          List<Future<RecordMetadata>> sends = new ArrayList<>(calls.size());
          for (Future<Future<RecordMetadata>> call : calls) {
            sends.add(call.get());
          }
          producer.flush();
          for (Future<RecordMetadata> send : sends) {
            send.get(); // throws if the broker refused one: the batch is not committed
          }
        } else {
          List<CompletableFuture<Void>> pending = new ArrayList<>(batch.count());
          for (ConsumerRecord<String, String> r : batch) {
            pending.add(processAsync(r));
          }
          CompletableFuture.allOf(pending.toArray(CompletableFuture[]::new)).join();
        }
        consumer.commitSync(); // every record of the batch is in `output` by now
      }
    }
  }

  /** The contract's start-up line: the CPUs the JVM saw and what makes the downstream calls. */
  static RuntimeReport report(String mode, int poolSize) {
    return switch (mode) {
      case "threadpool" -> new RuntimeReport("pool threads making the downstream calls", poolSize);
      case "virtual" ->
          new RuntimeReport(
              "carrier threads of the virtual-thread scheduler (a virtual thread per record)",
              RuntimeReport.virtualThreadParallelism());
      default ->
          new RuntimeReport("event loop making the downstream calls (one Vert.x context)", 1)
              .with("event_loops_made", VertxOptions.DEFAULT_EVENT_LOOP_POOL_SIZE);
    };
  }

  public static void main(String[] argv) throws Exception {
    Args args = new Args(argv);
    String bootstrap = System.getenv().getOrDefault("IOBOUND_KAFKA_BOOTSTRAP", "127.0.0.1:9092");
    int maxPoll = args.getInt("max-poll", 1000);
    // The pool defaults to the batch size: a smaller one makes a batch wait for rounds of calls.
    String pool = args.get("pool", "max_poll");
    int poolSize = pool.equals("max_poll") ? maxPoll : args.getInt("pool", maxPoll);
    Pipeline p = new Pipeline(args.get("mode", "threadpool"), bootstrap, poolSize);
    // Ready (200 on /plaintext) once the consumer owns its partitions: before that, records
    // would wait for a rebalance and the harness would measure it.
    HttpServer health =
        HttpServer.create(new InetSocketAddress(args.address(), args.getInt("port", 8080)), 64);
    health.createContext(
        "/",
        ex -> {
          boolean ok = ex.getRequestURI().getPath().equals("/plaintext") && p.assigned;
          byte[] body = (ok ? Contract.PLAINTEXT : "not ready").getBytes(StandardCharsets.UTF_8);
          ex.sendResponseHeaders(ok ? 200 : 503, body.length);
          ex.getResponseBody().write(body);
          ex.close();
        });
    health.start();
    report(args.get("mode", "threadpool"), poolSize).print();
    p.run(bootstrap, maxPoll);
  }
}
