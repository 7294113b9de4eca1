package dev.iobound.kafkaload;

import dev.iobound.common.Args;
import dev.iobound.common.KafkaPipeline;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;

/**
 * The harness's load for pipeline scenarios (run by iobound, pinned to the driver's CPUs). {@code
 * --create-topics P} creates `input` and `output` with P partitions. Otherwise it produces records
 * to `input` on an open-model schedule ({@code --rate} per second for {@code --duration} seconds;
 * value = "tag,seq,intended send time"), reads `output`, and records each record's end-to-end
 * latency from its intended send time (no coordinated omission) into HdrHistograms (µs), with
 * per-second rows and the lag (sent, not yet seen). Afterwards it checks that every sequence number
 * arrived (duplicates counted: the pipelines are at-least-once) and writes one JSON object to
 * {@code --out}. With {@code --warmup W} the schedule first runs W seconds more at the same rate,
 * without a pause before the measured seconds: the report is the measured records', with the
 * warm-up's report under {@code "warmup"} (its seconds, to judge whether the pipeline had settled).
 * With {@code --start-epoch-ms} the schedule begins at that wall-clock time (the common start of
 * several load hosts, each with its own tag and share of the rate); the report then says how late
 * this tool was ready for it, and each second carries its histogram so that the controller can add
 * the hosts' seconds exactly.
 */
public final class LoadTool {
  public static void main(String[] argv) throws Exception {
    Args args = new Args(argv);
    String bootstrap = args.get("bootstrap", "127.0.0.1:9092");
    int partitions = args.getInt("create-topics", 0);
    if (partitions > 0) {
      createTopics(bootstrap, partitions);
      return;
    }
    double rate = Double.parseDouble(args.get("rate", "100"));
    double seconds = Double.parseDouble(args.get("duration", "10"));
    double drain = Double.parseDouble(args.get("drain", "15"));
    String tag = args.get("tag", "t" + System.nanoTime());
    Path out = Path.of(args.get("out", "pipeline.json"));
    double warmup = Double.parseDouble(args.get("warmup", "0"));
    long startEpochMs = Long.parseLong(args.get("start-epoch-ms", "0"));
    Files.writeString(
        out, new LoadTool(bootstrap, tag).run(rate, warmup, seconds, drain, startEpochMs));
  }

  static void createTopics(String bootstrap, int partitions) throws Exception {
    Properties p = new Properties();
    p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    try (Admin admin = Admin.create(p)) {
      try {
        admin
            .createTopics(
                List.of(
                    new NewTopic(KafkaPipeline.IN, partitions, (short) 1),
                    new NewTopic(KafkaPipeline.OUT, partitions, (short) 1)))
            .all()
            .get();
      } catch (java.util.concurrent.ExecutionException e) {
        if (!(e.getCause() instanceof org.apache.kafka.common.errors.TopicExistsException)) {
          throw e;
        }
      }
    }
  }

  private final String bootstrap;
  private final String tag;

  LoadTool(String bootstrap, String tag) {
    this.bootstrap = bootstrap;
    this.tag = tag;
  }

  /**
   * Runs the schedule, {@code warmup} seconds then {@code seconds}, without a pause between them,
   * and returns the measured load's report; with a warm-up, that report carries the warm-up's under
   * {@code "warmup"}.
   */
  String run(double rate, double warmup, double seconds, double drainSeconds, long startEpochMs)
      throws Exception {
    long warm = Math.round(rate * warmup);
    long total = warm + Math.round(rate * seconds);
    if (total > Integer.MAX_VALUE - 1) {
      throw new IllegalArgumentException("too many records: " + total);
    }
    BitSet seen = new BitSet((int) total);
    AtomicLong sent = new AtomicLong();
    long lateMs;
    Phase warmUp;
    Phase measured;

    Properties c = new Properties();
    c.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    c.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
    c.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
    Properties p = KafkaPipeline.producerProperties(bootstrap, 1);
    try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(c);
        KafkaProducer<String, String> producer = new KafkaProducer<>(p)) {
      List<TopicPartition> parts = new ArrayList<>();
      for (PartitionInfo info : consumer.partitionsFor(KafkaPipeline.OUT)) {
        parts.add(new TopicPartition(info.topic(), info.partition()));
      }
      consumer.assign(parts);
      consumer.seekToEnd(parts);
      parts.forEach(consumer::position); // resolve the end offsets before producing
      long ready = System.nanoTime();
      // The schedule's first instant: the common start when given (a wall-clock time turned into
      // this JVM's nanoTime), else 50 ms from now. Ready after it, the schedule still holds:
      // records due meanwhile go out at once, their latency counted from when they were due.
      long start =
          startEpochMs > 0
              ? ready + (startEpochMs - System.currentTimeMillis()) * 1_000_000L
              : ready + 50_000_000L;
      lateMs = Math.max(0, (ready - start) / 1_000_000L);
      warmUp = new Phase(0, warm, start, warmup);
      long measuredStart = start + (long) (warmup * 1e9);
      measured = new Phase(warm, total - warm, measuredStart, seconds + drainSeconds);
      Thread sender =
          Thread.ofPlatform()
              .name("iobound-pipeline-producer")
              .start(
                  () -> {
                    for (long i = 0; i < total; i++) {
                      long intended = start + (long) (i * 1e9 / rate);
                      long wait;
                      while ((wait = intended - System.nanoTime()) > 0) {
                        LockSupport.parkNanos(Math.min(wait, 1_000_000L));
                      }
                      producer.send(
                          new ProducerRecord<>(
                              KafkaPipeline.IN, "k" + i, tag + "," + i + "," + intended));
                      sent.incrementAndGet();
                    }
                    producer.flush();
                  });
      long deadline = measuredStart + (long) ((seconds + drainSeconds) * 1e9);
      long receivedInAll = 0;
      while (System.nanoTime() < deadline && (receivedInAll < total || sender.isAlive())) {
        for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(50))) {
          long now = System.nanoTime();
          String[] f = r.value().split(",", 4);
          if (f.length < 4 || !f[0].equals(tag)) {
            continue; // another run's record, or not ours
          }
          int seq;
          long intended;
          try {
            seq = Integer.parseInt(f[1]);
            intended = Long.parseLong(f[2]);
          } catch (NumberFormatException e) {
            measured.malformed++;
            continue;
          }
          if (seq < 0 || seq >= total || !r.key().equals("k" + seq)) {
            measured.malformed++;
            continue;
          }
          Phase phase = warmUp.holds(seq) ? warmUp : measured;
          if (seen.get(seq)) {
            phase.duplicates++;
            continue;
          }
          seen.set(seq);
          receivedInAll++;
          if (f[3].equals(KafkaPipeline.FAILED)) {
            phase.arrivedFailed(now);
          } else if (f[3].equals("value-k" + seq)) {
            phase.arrived(now, intended);
          } else {
            phase.received++; // it arrived, but not as the input plus its enrichment
            phase.malformed++;
          }
        }
        long now = System.nanoTime();
        warmUp.lag(now, sent.get());
        measured.lag(now, sent.get());
      }
      sender.join(5_000);
    }
    String report = measured.json(sent.get(), seen, lateMs);
    if (warm == 0) {
      return report;
    }
    String warmUpReport = warmUp.json(sent.get(), seen, lateMs);
    return report.substring(0, report.length() - 1) + ",\"warmup\":" + warmUpReport + "}";
  }
}
