package dev.iobound.kafkaload;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.BitSet;
import java.util.List;
import org.HdrHistogram.Histogram;

/**
 * One phase of the load tool's schedule, the warm-up or the measured load: a run of sequence
 * numbers sent one after the other at the same rate, and what arrived of them. Its seconds count
 * from its own first instant, so that the measured load's report reads as if it had run alone,
 * while the tool (its producer, its consumer, its JIT) and the pipeline under test carried on from
 * the warm-up without a pause.
 */
final class Phase {
  static final long HIGHEST = Duration.ofMinutes(10).toNanos() / 1000;

  /** Its first sequence number and how many it has. */
  final long first;

  final long count;

  /** Its first instant (this JVM's nanoTime) and the same as a wall-clock time (ms). */
  final long start;

  final long startEpochMs;

  private final int secondsCount;
  private final Histogram all = new Histogram(HIGHEST, 3);
  private final List<Histogram> perSecond = new ArrayList<>();
  private final long[] failedPerSecond;
  private final long[] lagPerSecond;
  private int lastLagSecond = -1;
  long received;
  long duplicates;
  long failed;
  long malformed;

  Phase(long first, long count, long start, double seconds) {
    this.first = first;
    this.count = count;
    this.start = start;
    this.startEpochMs = System.currentTimeMillis() + (start - System.nanoTime()) / 1_000_000L;
    this.secondsCount = (int) Math.ceil(seconds) + 2;
    for (int i = 0; i < secondsCount; i++) {
      perSecond.add(new Histogram(HIGHEST, 3));
    }
    failedPerSecond = new long[secondsCount];
    lagPerSecond = new long[secondsCount];
  }

  boolean holds(long seq) {
    return seq >= first && seq < first + count;
  }

  /** The second of this phase {@code now} falls in (the last one for anything later). */
  private int second(long now) {
    return (int) Math.max(0, Math.min(secondsCount - 1, (now - start) / 1_000_000_000L));
  }

  /** A record of this phase arrived enriched at {@code now}, sent for {@code intended}. */
  void arrived(long now, long intended) {
    received++;
    long micros = Math.max(1, Math.min(HIGHEST, (now - intended) / 1000));
    all.recordValue(micros);
    perSecond.get(second(now)).recordValue(micros);
  }

  /** A record of this phase arrived marked failed (its enrichment failed) at {@code now}. */
  void arrivedFailed(long now) {
    received++;
    failed++;
    failedPerSecond[second(now)]++;
  }

  /** Of the records sent so far in all, how many are this phase's. */
  long sent(long sentInAll) {
    return Math.max(0, Math.min(count, sentInAll - first));
  }

  /** Once a second of this phase: its records sent and not yet seen. */
  void lag(long now, long sentInAll) {
    if (now < start) {
      return; // not yet begun (a division would round the last instants before it to 0)
    }
    long t = (now - start) / 1_000_000_000L;
    if (t > lastLagSecond && t < secondsCount) {
      lastLagSecond = (int) t;
      lagPerSecond[lastLagSecond] = sent(sentInAll) - received;
    }
  }

  /** The report of this phase: counts, lost records, histograms, each second's row. */
  String json(long sentInAll, BitSet seen, long lateMs) {
    List<String> lost = new ArrayList<>();
    long lostCount = 0;
    for (long i = seen.nextClearBit((int) first); i < first + count; ) {
      lostCount++;
      if (lost.size() < 5) {
        lost.add(Long.toString(i));
      }
      i = seen.nextClearBit((int) i + 1);
    }
    StringBuilder json = new StringBuilder();
    json.append("{\"sent\":")
        .append(sent(sentInAll))
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
        .append(",\"start_epoch_ms\":")
        .append(startEpochMs)
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
    return json.append("]}").toString();
  }

  /** Base64 of a histogram's compressed encoding. */
  private static String encode(Histogram h) {
    ByteBuffer buf = ByteBuffer.allocate(h.getNeededByteBufferCapacity());
    int n = h.encodeIntoCompressedByteBuffer(buf);
    return Base64.getEncoder().encodeToString(java.util.Arrays.copyOf(buf.array(), n));
  }
}
