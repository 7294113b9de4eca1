'use strict';
// CPU profiles for `iobound run --profile`: when IOBOUND_V8_PROFILE_DIR is set, SIGUSR2 starts
// V8's CPU profiler in this process (node:inspector, sampling every 10 ms like the JVM and Go
// profilers) and the next SIGUSR2 stops it and writes <dir>/<pid>.cpuprofile, the format
// `node --cpu-prof` writes. A cluster's primary passes the signal on to its workers. Nothing
// of this runs without the variable.
const fs = require('node:fs');
const path = require('node:path');

function profileOnSignal(workers) {
  const dir = process.env.IOBOUND_V8_PROFILE_DIR;
  if (!dir) return;
  if (workers) {
    process.on('SIGUSR2', () => {
      for (const w of Object.values(workers())) w.process.kill('SIGUSR2');
    });
    return;
  }
  const inspector = require('node:inspector');
  let session = null;
  process.on('SIGUSR2', () => {
    if (!session) {
      session = new inspector.Session();
      session.connect();
      session.post('Profiler.enable', () =>
        session.post('Profiler.setSamplingInterval', { interval: 10000 }, () => session.post('Profiler.start')));
      return;
    }
    const s = session;
    session = null;
    s.post('Profiler.stop', (err, result) => {
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

module.exports = { profileOnSignal };
