"use strict";
// Event loop on Node.js: one thread runs JavaScript; waiting is a timer, files are read with
// fs.promises (libuv's thread pool, 4 threads by default) and hashed on the loop, and /enrich
// calls the downstream with the built-in fetch (undici, keep-alive pool). With --cluster, one
// worker process per CPU this process may run on, sharing the port (node:cluster).
const http = require("node:http");
const os = require("node:os");
const cluster = require("node:cluster");
const { runtimeLine } = require("./runtime_report");
const { profileOnSignal, reportLoopDelay } = require("./profile.js");
const crypto = require("node:crypto");
const fs = require("node:fs/promises");
const nodePath = require("node:path");
const pg = require("pg");
const {
  PLAINTEXT,
  MAX_BODY_BYTES,
  BadRequest,
  delayMs,
  hashDelayMs,
  hashId,
  enrichKey,
  aggregateKeys,
  messageLimit,
  messageId,
  messageText,
} = require("./contract");

const corpusDir = process.env.IOBOUND_CORPUS_DIR || ".";
const corpusFiles = Number(process.env.IOBOUND_CORPUS_FILES || "0");
const downstreamUrl =
  process.env.IOBOUND_DOWNSTREAM_URL || "http://127.0.0.1:8081";
const downstreamTimeoutMs = Number(
  process.env.IOBOUND_DOWNSTREAM_TIMEOUT_MS || "2000",
);

function option(name, fallback) {
  const prefix = `--${name}=`;
  const found = process.argv.find((a) => a.startsWith(prefix));
  return found ? found.slice(prefix.length) : fallback;
}

// /messages: node-postgres' Pool. A cluster splits IOBOUND_DB_POOL between its workers, so the
// contender as a whole holds as many connections as every other one.
const SHARE = Number(process.env.IOBOUND_DB_POOL_SHARE || "1");
const db = new pg.Pool({
  host: process.env.IOBOUND_DB_HOST || "127.0.0.1",
  port: Number(process.env.IOBOUND_DB_PORT || "5432"),
  database: process.env.IOBOUND_DB_NAME || "iobound",
  user: process.env.IOBOUND_DB_USER || "iobound",
  password: process.env.IOBOUND_DB_PASSWORD || "",
  max: Math.max(
    1,
    Math.floor(Number(process.env.IOBOUND_DB_POOL || "10") / SHARE),
  ),
});
// bigint ids as numbers (they stay far below 2^53 here), so that JSON has numbers as the contract says.
pg.types.setTypeParser(pg.types.builtins.INT8, (v) => Number(v));

// Named statements: node-postgres prepares each once per connection and then only binds and
// executes it, as pgx, JDBC, R2DBC and the Vert.x client do with their statement caches
// (unnamed ones are parsed and planned by PostgreSQL on every request).
const SQL = {
  list: "SELECT id, text FROM messages ORDER BY id DESC LIMIT $1",
  get: "SELECT id, text FROM messages WHERE id = $1",
  create: "INSERT INTO messages (text) VALUES ($1) RETURNING id, text",
  update: "UPDATE messages SET text = $1 WHERE id = $2 RETURNING id, text",
  delete: "DELETE FROM messages WHERE id = $1",
};
const STATEMENTS = Object.fromEntries(
  Object.entries(SQL).map(([k, text]) => [k, { name: `messages-${k}`, text }]),
);
/** Runs a named statement with `values`. */
const query = (key, values) => db.query({ ...STATEMENTS[key], values });

class TooLarge extends Error {}

/** The request body as parsed JSON; bodies over 64 KiB are read to the end and refused. */
function readJson(req) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    let size = 0;
    req.on("data", (c) => {
      size += c.length;
      if (size <= MAX_BODY_BYTES) chunks.push(c);
    });
    req.on("error", reject);
    req.on("end", () => {
      if (size > MAX_BODY_BYTES)
        return reject(new TooLarge(`body over ${MAX_BODY_BYTES} bytes`));
      try {
        return resolve(JSON.parse(Buffer.concat(chunks).toString("utf8")));
      } catch {
        return reject(new BadRequest("body is not valid JSON"));
      }
    });
  });
}

function json(res, status, value) {
  const body = JSON.stringify(value);
  res.writeHead(status, {
    "Content-Type": "application/json",
    "Content-Length": Buffer.byteLength(body),
  });
  res.end(body);
}

function one(res, status, result) {
  if (result.rowCount === 0) return send(res, 404, "no such message");
  return json(res, status, result.rows[0]);
}

async function messages(req, res, params, path) {
  if (path === "/messages") {
    if (req.method === "GET")
      return json(
        res,
        200,
        (await query("list", [messageLimit(params.get("limit"))])).rows,
      );
    if (req.method === "POST")
      return one(
        res,
        201,
        await query("create", [messageText(await readJson(req))]),
      );
    return send(res, 405, "use GET or POST");
  }
  const id = messageId(path.slice("/messages/".length));
  if (req.method === "GET") return one(res, 200, await query("get", [id]));
  if (req.method === "PUT")
    return one(
      res,
      200,
      await query("update", [messageText(await readJson(req)), id]),
    );
  if (req.method === "DELETE") {
    const r = await query("delete", [id]);
    if (r.rowCount === 0) return send(res, 404, "no such message");
    res.writeHead(204);
    return res.end();
  }
  return send(res, 405, "use GET, PUT or DELETE");
}

function failed(res, e) {
  if (e instanceof BadRequest) return send(res, 400, e.message);
  if (e instanceof TooLarge) return send(res, 413, e.message);
  return send(res, 500, e.message);
}

function send(res, status, body) {
  res.writeHead(status, {
    "Content-Type": "text/plain; charset=utf-8",
    "Content-Length": Buffer.byteLength(body),
  });
  res.end(body);
}

async function hash(res, params) {
  const id = hashId(params.get("id"), corpusFiles);
  const wait = hashDelayMs(params.get("delayMs"));
  if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
  // The file name comes from the parsed number, never from the input.
  const bytes = await fs.readFile(nodePath.join(corpusDir, `${id}.bin`));
  send(res, 200, crypto.createHash("sha512").update(bytes).digest("hex"));
}

async function enrich(res, params) {
  const key = enrichKey(params.get("key"));
  let answer;
  try {
    answer = await fetch(`${downstreamUrl}/value?key=${key}`, {
      signal: AbortSignal.timeout(downstreamTimeoutMs),
    });
    if (!answer.ok)
      return send(res, 502, `downstream answered ${answer.status}`);
    return send(res, 200, `${key}=${await answer.text()}`);
  } catch (e) {
    if (e.name === "TimeoutError")
      return send(
        res,
        504,
        `downstream did not answer within ${downstreamTimeoutMs} ms`,
      );
    return send(res, 502, `downstream failed: ${e.message}`);
  }
}

/** A downstream answer that was not 2xx. */
class DownstreamStatus extends Error {}

/**
 * /aggregate, the fan-out: every call starts at once, all under one AbortController.
 * Promise.all settles with the first failure; aborting the controller then cancels the fetches
 * still running (undici closes their connections). The values are answered in key order.
 */
async function aggregate(res, params) {
  const keys = aggregateKeys(params.get("keys"));
  const controller = new AbortController();
  const signal = AbortSignal.any([
    controller.signal,
    AbortSignal.timeout(downstreamTimeoutMs),
  ]);
  const call = async (key) => {
    const answer = await fetch(`${downstreamUrl}/value?key=${key}`, { signal });
    if (!answer.ok)
      throw new DownstreamStatus(`downstream answered ${answer.status}`);
    return answer.text();
  };
  try {
    return json(res, 200, await Promise.all(keys.map(call)));
  } catch (e) {
    controller.abort();
    if (e.name === "TimeoutError")
      return send(
        res,
        504,
        `downstream did not answer within ${downstreamTimeoutMs} ms`,
      );
    if (e instanceof DownstreamStatus) return send(res, 502, e.message);
    return send(res, 502, `downstream failed: ${e.message}`);
  }
}

const routes = { "/hash": hash, "/enrich": enrich, "/aggregate": aggregate };

function handle(req, res) {
  const q = req.url.indexOf("?");
  const path = q < 0 ? req.url : req.url.slice(0, q);
  if (path === "/messages" || path.startsWith("/messages/")) {
    messages(
      req,
      res,
      new URLSearchParams(q < 0 ? "" : req.url.slice(q + 1)),
      path,
    ).catch((e) => failed(res, e));
    return undefined;
  }
  if (req.method !== "GET") return send(res, 404, "not found");
  if (path === "/plaintext") return send(res, 200, PLAINTEXT);
  const params = new URLSearchParams(q < 0 ? "" : req.url.slice(q + 1));
  if (path === "/delay") {
    let ms;
    try {
      ms = delayMs(params.get("ms"));
    } catch (e) {
      if (e instanceof BadRequest) return send(res, 400, e.message);
      throw e;
    }
    setTimeout(() => send(res, 200, String(ms)), ms);
    return undefined;
  }
  const route = routes[path];
  if (route) {
    route(res, params).catch((e) =>
      send(res, e instanceof BadRequest ? 400 : 500, e.message),
    );
    return undefined;
  }
  return send(res, 404, "not found");
}

const port = Number(option("port", "8080"));
const address = option("address", "127.0.0.1");
const workers = option("cluster", "off");

if (workers !== "off" && cluster.isPrimary) {
  const n = workers === "auto" ? os.availableParallelism() : Number(workers);
  for (let i = 0; i < n; i++)
    cluster.fork({ IOBOUND_DB_POOL_SHARE: String(n) });
  profileOnSignal(() => cluster.workers);
  console.log(`node cluster: ${n} worker(s) on ${address}:${port}`);
  console.log(
    runtimeLine(n, "worker processes, an event loop each (node:cluster)", {
      processes_forked: n,
    }),
  );
} else {
  profileOnSignal(null);
  reportLoopDelay();
  const server = http.createServer(handle);
  server.keepAliveTimeout = 65000; // keep idle load-test connections open, as a proxy in front would
  server.listen({ port, host: address, backlog: 4096 }, () => {
    console.log(
      `node ${process.version} pid ${process.pid} listening on ${address}:${port}`,
    );
    // A cluster's primary speaks for its workers.
    if (!cluster.isWorker) {
      console.log(runtimeLine(1, "event loop (one process)"));
    }
  });
}
