package dev.iobound.common;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.ForkJoinPool;

/**
 * The contract's start-up line, {@code iobound-runtime {json}}: what the JVM detected (CPUs, the
 * heap it may grow to) and how the server sized itself from that. iobound reads it from the log, so
 * that a run under a CPU quota shows whether the runtime believed it had one CPU or the machine's
 * all; conformance fails a contender that does not print it.
 */
public final class RuntimeReport {
  private final Map<String, Object> fields = new LinkedHashMap<>();

  /**
   * A report of {@code workers} threads (or event loops, or carriers) that serve requests, in words
   * by {@code workersOf}, with the JVM's own figures.
   */
  public RuntimeReport(String workersOf, int workers) {
    Runtime rt = Runtime.getRuntime();
    fields.put("language", "java");
    fields.put("cpus", rt.availableProcessors());
    fields.put("workers", workers);
    fields.put("workers_of", workersOf);
    fields.put("heap_max_mb", rt.maxMemory() >> 20);
    fields.put("common_pool_parallelism", ForkJoinPool.getCommonPoolParallelism());
    fields.put("virtual_thread_parallelism", virtualThreadParallelism());
  }

  /** A further figure the server sized itself by (a pool, a group of loops). */
  public RuntimeReport with(String key, Object value) {
    fields.put(key, value);
    return this;
  }

  /** Writes the line to standard output, which iobound keeps in the contender's log. */
  public void print() {
    System.out.println("iobound-runtime " + json());
    System.out.flush();
  }

  /**
   * The virtual-thread scheduler's carriers: the JDK sizes them from availableProcessors unless the
   * property says otherwise.
   */
  public static int virtualThreadParallelism() {
    return Integer.getInteger(
        "jdk.virtualThreadScheduler.parallelism", Runtime.getRuntime().availableProcessors());
  }

  String json() {
    StringBuilder out = new StringBuilder("{");
    for (Map.Entry<String, Object> e : fields.entrySet()) {
      if (out.length() > 1) {
        out.append(',');
      }
      out.append(quote(e.getKey())).append(':');
      Object v = e.getValue();
      out.append(v instanceof Number ? v.toString() : quote(String.valueOf(v)));
    }
    return out.append('}').toString();
  }

  private static String quote(String s) {
    StringBuilder out = new StringBuilder("\"");
    for (char c : s.toCharArray()) {
      switch (c) {
        case '"' -> out.append("\\\"");
        case '\\' -> out.append("\\\\");
        default -> {
          if (c < 0x20) {
            out.append(String.format("\\u%04x", (int) c));
          } else {
            out.append(c);
          }
        }
      }
    }
    return out.append('"').toString();
  }
}
