'use strict';
// Event loop on Node.js: one thread runs JavaScript; waiting is a timer, files are read with
// fs.promises (libuv's thread pool, 4 threads by default) and hashed on the loop, and /enrich
// calls the downstream with the built-in fetch (undici, keep-alive pool). With --cluster, one
// worker process per CPU this process may run on, sharing the port (node:cluster).
const http = require('node:http');
const os = require('node:os');
const cluster = require('node:cluster');
const crypto = require('node:crypto');
const fs = require('node:fs/promises');
const nodePath = require('node:path');
const { PLAINTEXT, BadRequest, delayMs, hashDelayMs, hashId, enrichKey } = require('./contract');

const corpusDir = process.env.IOBOUND_CORPUS_DIR || '.';
const corpusFiles = Number(process.env.IOBOUND_CORPUS_FILES || '0');
const downstreamUrl = process.env.IOBOUND_DOWNSTREAM_URL || 'http://127.0.0.1:8081';
const downstreamTimeoutMs = Number(process.env.IOBOUND_DOWNSTREAM_TIMEOUT_MS || '2000');

function option(name, fallback) {
  const prefix = `--${name}=`;
  const found = process.argv.find((a) => a.startsWith(prefix));
  return found ? found.slice(prefix.length) : fallback;
}

function send(res, status, body) {
  res.writeHead(status, { 'Content-Type': 'text/plain; charset=utf-8', 'Content-Length': Buffer.byteLength(body) });
  res.end(body);
}

async function hash(res, params) {
  const id = hashId(params.get('id'), corpusFiles);
  const wait = hashDelayMs(params.get('delayMs'));
  if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
  // The file name comes from the parsed number, never from the input.
  const bytes = await fs.readFile(nodePath.join(corpusDir, `${id}.bin`));
  send(res, 200, crypto.createHash('sha512').update(bytes).digest('hex'));
}

async function enrich(res, params) {
  const key = enrichKey(params.get('key'));
  let answer;
  try {
    answer = await fetch(`${downstreamUrl}/value?key=${key}`, { signal: AbortSignal.timeout(downstreamTimeoutMs) });
    if (!answer.ok) return send(res, 502, `downstream answered ${answer.status}`);
    return send(res, 200, `${key}=${await answer.text()}`);
  } catch (e) {
    if (e.name === 'TimeoutError') return send(res, 504, `downstream did not answer within ${downstreamTimeoutMs} ms`);
    return send(res, 502, `downstream failed: ${e.message}`);
  }
}

const routes = { '/hash': hash, '/enrich': enrich };

function handle(req, res) {
  const q = req.url.indexOf('?');
  const path = q < 0 ? req.url : req.url.slice(0, q);
  if (req.method !== 'GET') return send(res, 404, 'not found');
  if (path === '/plaintext') return send(res, 200, PLAINTEXT);
  const params = new URLSearchParams(q < 0 ? '' : req.url.slice(q + 1));
  if (path === '/delay') {
    let ms;
    try {
      ms = delayMs(params.get('ms'));
    } catch (e) {
      if (e instanceof BadRequest) return send(res, 400, e.message);
      throw e;
    }
    setTimeout(() => send(res, 200, String(ms)), ms);
    return undefined;
  }
  const route = routes[path];
  if (route) {
    route(res, params).catch((e) => send(res, e instanceof BadRequest ? 400 : 500, e.message));
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
