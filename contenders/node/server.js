'use strict';
// Event loop on Node.js: one thread runs JavaScript; waiting is a timer. With --cluster, one
// worker process per CPU this process may run on, sharing the port (node:cluster).
const http = require('node:http');
const os = require('node:os');
const cluster = require('node:cluster');
const { PLAINTEXT, BadRequest, delayMs } = require('./contract');

function option(name, fallback) {
  const prefix = `--${name}=`;
  const found = process.argv.find((a) => a.startsWith(prefix));
  return found ? found.slice(prefix.length) : fallback;
}

function send(res, status, body) {
  res.writeHead(status, { 'Content-Type': 'text/plain; charset=utf-8', 'Content-Length': Buffer.byteLength(body) });
  res.end(body);
}

function handle(req, res) {
  const q = req.url.indexOf('?');
  const path = q < 0 ? req.url : req.url.slice(0, q);
  if (req.method !== 'GET') return send(res, 404, 'not found');
  if (path === '/plaintext') return send(res, 200, PLAINTEXT);
  if (path === '/delay') {
    let ms;
    try {
      ms = delayMs(new URLSearchParams(q < 0 ? '' : req.url.slice(q + 1)).get('ms'));
    } catch (e) {
      if (e instanceof BadRequest) return send(res, 400, e.message);
      throw e;
    }
    setTimeout(() => send(res, 200, String(ms)), ms);
    return undefined;
  }
  return send(res, 404, 'not found');
}

const port = Number(option('port', '8080'));
const workers = option('cluster', 'off');

if (workers !== 'off' && cluster.isPrimary) {
  const n = workers === 'auto' ? os.availableParallelism() : Number(workers);
  for (let i = 0; i < n; i++) cluster.fork();
  console.log(`node cluster: ${n} worker(s) on 127.0.0.1:${port}`);
} else {
  const server = http.createServer(handle);
  server.keepAliveTimeout = 65000; // keep idle load-test connections open, as a proxy in front would
  server.listen({ port, host: '127.0.0.1', backlog: 4096 }, () => {
    console.log(`node ${process.version} pid ${process.pid} listening on 127.0.0.1:${port}`);
  });
}
