package dev.iobound.common;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class RuntimeReportTest {
  @Test
  void carriesTheJvmsOwnFiguresAndTheServers() {
    String json = new RuntimeReport("Jetty \"pool\" threads", 200).with("selectors", 1).json();
    int cpus = Runtime.getRuntime().availableProcessors();
    assertTrue(json.startsWith("{\"language\":\"java\",\"cpus\":" + cpus + ",\"workers\":200,"));
    assertTrue(json.contains("\"workers_of\":\"Jetty \\\"pool\\\" threads\""), json);
    assertTrue(json.contains("\"heap_max_mb\":" + (Runtime.getRuntime().maxMemory() >> 20)));
    assertTrue(json.endsWith(",\"selectors\":1}"), json);
  }

  @Test
  void virtualThreadCarriersFollowTheCpusUnlessSet() {
    assertEquals(
        Runtime.getRuntime().availableProcessors(), RuntimeReport.virtualThreadParallelism());
  }
}
