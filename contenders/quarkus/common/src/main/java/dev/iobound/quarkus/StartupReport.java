package dev.iobound.quarkus;

import dev.iobound.common.RuntimeReport;
import io.quarkus.runtime.StartupEvent;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import org.eclipse.microprofile.config.Config;
import org.eclipse.microprofile.config.ConfigProvider;

/**
 * The contract's start-up line for the three Quarkus models: the CPUs the JVM saw and the pools
 * Quarkus sized from them (its defaults where Main left them unset: two event loops per CPU, a
 * worker pool of max(200, 8 x CPUs)).
 */
@ApplicationScoped
public class StartupReport {
  void onStart(@Observes StartupEvent started) {
    Config config = ConfigProvider.getConfig();
    int cpus = Runtime.getRuntime().availableProcessors();
    int loops =
        config
            .getOptionalValue("quarkus.vertx.event-loops-pool-size", Integer.class)
            .orElse(2 * cpus);
    int workers =
        config
            .getOptionalValue("quarkus.thread-pool.max-threads", Integer.class)
            .orElse(Math.max(200, 8 * cpus));
    String model = config.getOptionalValue("iobound.model", String.class).orElse("worker");
    RuntimeReport report =
        switch (model) {
          case "reactive" ->
              new RuntimeReport("Vert.x event loops (the handlers run on them)", loops);
          case "virtual" ->
              new RuntimeReport(
                  "carrier threads of the virtual-thread scheduler (a virtual thread per request)",
                  RuntimeReport.virtualThreadParallelism());
          default -> new RuntimeReport("Quarkus worker pool threads (max)", workers);
        };
    report.with("event_loops", loops).with("worker_pool_max", workers).print();
  }
}
