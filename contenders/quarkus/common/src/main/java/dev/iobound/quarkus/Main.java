package dev.iobound.quarkus;

import dev.iobound.common.Args;
import io.quarkus.runtime.Quarkus;
import io.quarkus.runtime.annotations.QuarkusMain;

/**
 * Starts Quarkus with the harness's options turned into Quarkus configuration: --address, --port,
 * and the pool sizes iobound may tune (--event-loops, --worker-threads), where "auto" leaves
 * Quarkus's own default (event loops: two per CPU the process may use; worker pool: max(200, 8 x
 * CPUs)) and "cpus" asks for one per CPU.
 */
@QuarkusMain
public final class Main {
  private Main() {}

  public static void main(String... argv) {
    Args args = new Args(argv);
    System.setProperty("quarkus.http.host", args.address());
    System.setProperty("quarkus.http.port", Integer.toString(args.getInt("port", 8080)));
    set(args, "event-loops", "quarkus.vertx.event-loops-pool-size");
    set(args, "worker-threads", "quarkus.thread-pool.max-threads");
    System.setProperty(
        "iobound.fanout-threads", Integer.toString(args.getInt("fanout-threads", 64)));
    Quarkus.run();
  }

  /** "auto": Quarkus's default; "cpus": one per CPU this process may run on; otherwise a number. */
  private static void set(Args args, String option, String property) {
    String value = args.get(option, "auto");
    if ("cpus".equals(value)) {
      System.setProperty(property, Integer.toString(Runtime.getRuntime().availableProcessors()));
    } else if (!"auto".equals(value)) {
      System.setProperty(property, Integer.toString(args.getInt(option, 0)));
    }
  }
}
