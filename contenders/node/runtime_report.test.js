"use strict";
const test = require("node:test");
const assert = require("node:assert");
const os = require("node:os");
const { runtimeLine } = require("./runtime_report");

test("the runtime line is JSON after its prefix, with the CPUs Node sees", () => {
  const line = runtimeLine(3, "worker processes", { processes_forked: 3 });
  assert.ok(line.startsWith("iobound-runtime "));
  const report = JSON.parse(line.slice("iobound-runtime ".length));
  assert.strictEqual(report.cpus, os.availableParallelism());
  assert.strictEqual(report.workers, 3);
  assert.strictEqual(report.workers_of, "worker processes");
  assert.strictEqual(report.processes_forked, 3);
  assert.ok(report.heap_max_mb > 0);
});
