package dev.iobound.common;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class FanOutTest {
  /** A call that sleeps the ms its key names ("50" or "50-fail") and then answers or fails. */
  static String call(String key, AtomicInteger finished) throws Exception {
    Thread.sleep(Long.parseLong(key.split("-")[0]));
    if (key.endsWith("fail")) {
      throw new IOException("failed: " + key);
    }
    finished.incrementAndGet();
    return "value-" + key;
  }

  @Test
  void bothAnswerInKeyOrderWithTheCallsAtOnce() throws Exception {
    List<String> keys = List.of("150", "10", "100", "50");
    AtomicInteger finished = new AtomicInteger();
    try (ExecutorService pool = Executors.newFixedThreadPool(4)) {
      long start = System.nanoTime();
      assertEquals(
          List.of("value-150", "value-10", "value-100", "value-50"),
          FanOut.onPool(keys, pool, k -> call(k, finished)));
      assertEquals(
          List.of("value-150", "value-10", "value-100", "value-50"),
          FanOut.perRequest(keys, k -> call(k, finished)));
      long ms = (System.nanoTime() - start) / 1_000_000;
      assertTrue(ms < 2 * 290, "two fan-outs of at most 150 ms took " + ms + " ms");
    }
  }

  @Test
  void onPoolFailsAtOnceAndLeavesTheOthersRunning() throws Exception {
    AtomicInteger finished = new AtomicInteger();
    try (ExecutorService pool = Executors.newFixedThreadPool(4)) {
      long start = System.nanoTime();
      FanOut.Failed e =
          assertThrows(
              FanOut.Failed.class,
              () -> FanOut.onPool(List.of("10-fail", "400", "400"), pool, k -> call(k, finished)));
      long ms = (System.nanoTime() - start) / 1_000_000;
      assertInstanceOf(IOException.class, e.getCause());
      assertTrue(ms < 300, "the failure after 10 ms was thrown after " + ms + " ms");
      assertEquals(0, finished.get());
    }
    // Closing the pool waited for the two calls left running: they were served to the end.
    assertEquals(2, finished.get());
  }

  @Test
  void perRequestFailsAtOnceAndInterruptsTheOthers() {
    AtomicInteger finished = new AtomicInteger();
    long start = System.nanoTime();
    FanOut.Failed e =
        assertThrows(
            FanOut.Failed.class,
            () -> FanOut.perRequest(List.of("400", "10-fail", "400"), k -> call(k, finished)));
    long ms = (System.nanoTime() - start) / 1_000_000;
    assertInstanceOf(IOException.class, e.getCause());
    assertTrue(ms < 300, "the failure after 10 ms was thrown after " + ms + " ms");
    assertEquals(0, finished.get(), "the interrupted calls did not finish");
  }
}
