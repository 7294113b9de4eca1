package dev.iobound.common;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorCompletionService;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * /aggregate for blocking handlers: one blocking downstream call per key, all at once, the values
 * in key order, the first failure thrown as soon as it is known. Two ways, as the two kinds of
 * blocking code write it: {@link #onPool} for platform threads (a bounded pool shared by all
 * requests, CompletableFuture; a failure leaves the other calls running, since cancelling a
 * CompletableFuture does not interrupt its task) and {@link #perRequest} for virtual threads (an
 * executor of this request's own, whose calls are interrupted when one fails).
 */
public final class FanOut {
  private FanOut() {}

  /** One blocking downstream call. */
  @FunctionalInterface
  public interface Call {
    String get(String key) throws Exception;
  }

  /** The failure of one call, its cause unwrapped. */
  public static final class Failed extends Exception {
    public Failed(Throwable cause) {
      super(cause);
    }
  }

  /**
   * Runs the calls on {@code pool} and waits for all of them, or for the first to fail: then the
   * others are left to finish on the pool, their answers dropped.
   */
  public static List<String> onPool(List<String> keys, Executor pool, Call call)
      throws Failed, InterruptedException {
    CompletableFuture<Void> firstFailure = new CompletableFuture<>();
    List<CompletableFuture<String>> calls = new ArrayList<>(keys.size());
    for (String key : keys) {
      CompletableFuture<String> c =
          CompletableFuture.supplyAsync(
              () -> {
                try {
                  return call.get(key);
                } catch (Exception e) {
                  throw new CompletionException(e);
                }
              },
              pool);
      c.whenComplete(
          (v, e) -> {
            if (e != null) {
              firstFailure.completeExceptionally(e);
            }
          });
      calls.add(c);
    }
    CompletableFuture<Void> all = CompletableFuture.allOf(calls.toArray(CompletableFuture[]::new));
    try {
      CompletableFuture.anyOf(all, firstFailure).get();
    } catch (ExecutionException e) {
      throw new Failed(unwrap(e.getCause()));
    }
    return calls.stream().map(CompletableFuture::join).toList();
  }

  /**
   * Runs the calls on virtual threads of an executor made for this request, and waits for all of
   * them or the first to fail: then the others are interrupted (an interrupted JDK HttpClient call
   * aborts its request) and this returns once they have ended.
   */
  public static List<String> perRequest(List<String> keys, Call call)
      throws Failed, InterruptedException {
    try (ExecutorService executor = Executors.newVirtualThreadPerTaskExecutor()) {
      ExecutorCompletionService<String> done = new ExecutorCompletionService<>(executor);
      List<Future<String>> calls = new ArrayList<>(keys.size());
      for (String key : keys) {
        calls.add(done.submit(() -> call.get(key)));
      }
      for (int i = 0; i < keys.size(); i++) {
        try {
          done.take().get();
        } catch (ExecutionException e) {
          executor.shutdownNow();
          throw new Failed(unwrap(e.getCause()));
        }
      }
      return calls.stream().map(Future::resultNow).toList();
    }
  }

  private static Throwable unwrap(Throwable t) {
    return t instanceof CompletionException && t.getCause() != null ? t.getCause() : t;
  }
}
