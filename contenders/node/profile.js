"use strict";
// What iobound reads from a Node contender beside its answers. CPU profiles for `iobound run --profile`: when IOBOUND_V8_PROFILE_DIR is set, SIGUSR2 starts
// V8's CPU profiler in this process (node:inspector, sampling every 10 ms like the JVM and Go
// profilers) and the next SIGUSR2 stops it and writes <dir>/<pid>.cpuprofile, the format
// `node --cpu-prof` writes. A cluster's primary passes the signal on to its workers. Nothing
// of this runs without the variable.
const fs = require("node:fs");
const path = require("node:path");

function profileOnSignal(workers) {
  const dir = process.env.IOBOUND_V8_PROFILE_DIR;
  if (!dir) return;
  if (workers) {
    process.on("SIGUSR2", () => {
      for (const w of Object.values(workers())) w.process.kill("SIGUSR2");
    });
    return;
  }
  const inspector = require("node:inspector");
  let session = null;
  process.on("SIGUSR2", () => {
    if (!session) {
      session = new inspector.Session();
      session.connect();
      session.post("Profiler.enable", () =>
        session.post("Profiler.setSamplingInterval", { interval: 10000 }, () =>
          session.post("Profiler.start"),
        ),
      );
      return;
    }
    const s = session;
    session = null;
    s.post("Profiler.stop", (err, result) => {
      if (err) console.error(`profile not written: ${err.message}`);
      else {
        const file = path.join(dir, `${process.pid}.cpuprofile`);
        fs.writeFileSync(`${file}.tmp`, JSON.stringify(result.profile));
        fs.renameSync(`${file}.tmp`, file);
      }
      s.disconnect();
    });
  });
}

// Event-loop delay, one line a second to the log, stamped with the process's uptime like the
// --trace-gc lines; iobound keeps the lines of each measured run (harness/src/run/event_loop.rs).
// perf_hooks samples the loop every 10 ms; figures are the delay beyond that, in ms.
function reportLoopDelay() {
  const { monitorEventLoopDelay } = require("node:perf_hooks");
  const h = monitorEventLoopDelay({ resolution: 10 });
  h.enable();
  const ms = (ns) => (ns / 1e6).toFixed(2);
  setInterval(() => {
    console.log(
      `[${process.uptime().toFixed(3)}s] event-loop delay p50=${ms(h.percentile(50))}ms p99=${ms(h.percentile(99))}ms max=${ms(h.max)}ms`,
    );
    h.reset();
  }, 1000).unref();
}

module.exports = { profileOnSignal, reportLoopDelay };
