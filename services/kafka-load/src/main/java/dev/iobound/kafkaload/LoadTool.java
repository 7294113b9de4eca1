package dev.iobound.kafkaload;

import dev.iobound.common.Args;
import dev.iobound.common.KafkaPipeline;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.BitSet;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import org.HdrHistogram.Histogram;
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
 * {@code --out}. With {@code --start-epoch-ms} the schedule begins at that wall-clock time (the
 * common start of several load hosts, each with its own tag and share of the rate); the report then
 * says how late this tool was ready for it, and each second carries its histogram so that the
 * controller can add the hosts' seconds exactly.
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
    long startEpochMs = Long.parseLong(args.get("start-epoch-ms", "0"));
    Files.writeString(out, new LoadTool(bootstrap, tag).run(rate, seconds, drain, startEpochMs));
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

  /** How late (ms) this tool was ready for the given common start; 0 without one. */
  private long lateMs;

  LoadTool(String bootstrap, String tag) {
    this.bootstrap = bootstrap;
    this.tag = tag;
  }

  private static final long HIGHEST = Duration.ofMinutes(10).toNanos() / 1000;

  /** Base64 of a histogram's compressed encoding. */
  private static String encode(Histogram h) {
    ByteBuffer buf = ByteBuffer.allocate(h.getNeededByteBufferCapacity());
    int n = h.encodeIntoCompressedByteBuffer(buf);
    return Base64.getEncoder().encodeToString(java.util.Arrays.copyOf(buf.array(), n));
  }

  String run(double rate, double seconds, double drainSeconds, long startEpochMs) throws Exception {
    long total = Math.round(rate * seconds);
    if (total > Integer.MAX_VALUE - 1) {
      throw new IllegalArgumentException("too many records: " + total);
    }
    int secondsCount = (int) Math.ceil(seconds + drainSeconds) + 2;
    Histogram all = new Histogram(HIGHEST, 3);
    List<Histogram> perSecond = new ArrayList<>();
    for (int i = 0; i < secondsCount; i++) {
      perSecond.add(new Histogram(HIGHEST, 3));
    }
    long[] failedPerSecond = new long[secondsCount];
    long[] lagPerSecond = new long[secondsCount];
    BitSet seen = new BitSet((int) total);
    AtomicLong sent = new AtomicLong();
    long received = 0, duplicates = 0, failed = 0, malformed = 0;

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
      long end = start + (long) (seconds * 1e9);
      long deadline = end + (long) (drainSeconds * 1e9);
      int lastSecond = -1;
      while (System.nanoTime() < deadline && (received < total || sender.isAlive())) {
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
            malformed++;
            continue;
          }
          if (seq < 0 || seq >= total || !r.key().equals("k" + seq)) {
            malformed++;
            continue;
          }
          if (seen.get(seq)) {
            duplicates++;
            continue;
          }
          seen.set(seq);
          received++;
          int second =
              (int) Math.max(0, Math.min(secondsCount - 1, (now - start) / 1_000_000_000L));
          if (f[3].equals(KafkaPipeline.FAILED)) {
            failed++;
            failedPerSecond[second]++;
            continue;
          }
          if (!f[3].equals("value-k" + seq)) {
            malformed++;
            continue;
          }
          long micros = Math.max(1, Math.min(HIGHEST, (now - intended) / 1000));
          all.recordValue(micros);
          perSecond.get(second).recordValue(micros);
        }
        int second = (int) ((System.nanoTime() - start) / 1_000_000_000L);
        if (second > lastSecond && second >= 0 && second < secondsCount) {
          lagPerSecond[second] = sent.get() - received;
          lastSecond = second;
        }
      }
      sender.join(5_000);
    }
    List<String> lost = new ArrayList<>();
    long lostCount = 0;
    for (int i = seen.nextClearBit(0); i < total; i = seen.nextClearBit(i + 1)) {
      lostCount++;
      if (lost.size() < 5) {
        lost.add(Integer.toString(i));
      }
    }
    StringBuilder json = new StringBuilder();
    json.append("{\"sent\":")
        .append(sent.get())
        .append(",\"received\":")
        .append(received)
        .append(",\"duplicates\":")
        .append(duplicates)
        .append(",\"failed\":")
        .append(failed)
        .append(",\"malformed\":")
        .append(malformed)
        .append(",\"lost\":")
        .append(lostCount)
        .append(",\"lost_examples\":")
        .append(lost)
        .append(",\"start_late_ms\":")
        .append(lateMs)
        .append(",\"histogram\":\"")
        .append(encode(all))
        .append("\",\"intervals\":[");
    for (int s = 0; s < secondsCount; s++) {
      Histogram h = perSecond.get(s);
      if (s > 0) {
        json.append(',');
      }
      json.append(
          String.format(
              java.util.Locale.ROOT,
              "{\"t\":%d,\"ok\":%d,\"errors\":%d,\"lag\":%d,\"p50\":%.3f,\"p90\":%.3f,\"p99\":%.3f,\"max\":%.3f,\"histogram\":\"%s\"}",
              s,
              h.getTotalCount(),
              failedPerSecond[s],
              lagPerSecond[s],
              h.getValueAtPercentile(50) / 1000.0,
              h.getValueAtPercentile(90) / 1000.0,
              h.getValueAtPercentile(99) / 1000.0,
              h.getMaxValue() / 1000.0,
              encode(h)));
    }
    json.append("]}");
    return json.toString();
  }
}
