"use strict";
// The contract's start-up line, "iobound-runtime {json}": the CPUs Node says this process may use
// (os.availableParallelism reads its affinity, not a cgroup's CPU quota) and how the server sized
// itself, with V8's heap limit.

const os = require("node:os");
const v8 = require("node:v8");

function runtimeLine(workers, workersOf, more = {}) {
  const report = {
    language: "javascript",
    node_version: process.version,
    cpus: os.availableParallelism(),
    workers,
    workers_of: workersOf,
    heap_max_mb: Math.floor(v8.getHeapStatistics().heap_size_limit / 2 ** 20),
    libuv_threadpool: Number(process.env.UV_THREADPOOL_SIZE || 4),
    ...more,
  };
  return `iobound-runtime ${JSON.stringify(report)}`;
}

module.exports = { runtimeLine };
