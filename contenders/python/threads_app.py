"""python-threads: the same contract on Flask, served by gunicorn's threaded workers (gthread).

A request holds a worker thread for its whole life: /delay is time.sleep, files are read with a
plain open(), the downstream call is a blocking requests call (a Session per thread, as requests
sessions are not meant to be shared between threads) and the database a blocking psycopg 3
query on a connection from psycopg_pool (psycopg prepares a statement on a connection once it
has run five times there).
"""

import concurrent.futures
import hashlib
import os
import threading
import time

import psycopg
import psycopg_pool
import requests
from flask import Flask, Response, g, request

import contract as c
from runtime_report import processes, runtime_line

app = Flask(__name__)
# gunicorn imports the app in each worker process it forks (no --preload).
_threads = int(os.environ.get("IOBOUND_THREADS") or 1)
print(
    runtime_line(
        processes() * _threads,
        f"gthread threads ({processes()} worker process(es) x {_threads} threads)",
        processes=processes(),
    ),
    flush=True,
)
_local = threading.local()
_pool = None
_pool_lock = threading.Lock()


def pool():
    """One pool per worker process, opened on first use (after gunicorn forked it); the
    plan's pool is divided between the workers, as node-cluster divides it."""
    global _pool
    with _pool_lock:
        if _pool is None:
            db = c.db_settings(share=int(os.environ.get("IOBOUND_WORKERS") or 1))
            conninfo = psycopg.conninfo.make_conninfo(
                host=db["host"],
                port=db["port"],
                dbname=db["dbname"],
                user=db["user"],
                password=db["password"],
            )
            _pool = psycopg_pool.ConnectionPool(
                conninfo, min_size=0, max_size=db["pool"], open=True
            )
        return _pool


def session():
    s = getattr(_local, "session", None)
    if s is None:
        s = _local.session = requests.Session()
    return s


def text(status, body):
    return Response(body, status=status, content_type="text/plain; charset=utf-8")


@app.errorhandler(c.BadRequest)
def bad_request(e):
    return text(400, str(e))


@app.errorhandler(404)
def not_found(_):
    return text(404, "not found")


@app.before_request
def contract_rules():
    if not c.clean_path(request.path):
        return text(400, "path must be clean: no '.', '..' or empty segments")
    g.q = c.query(request.query_string.decode("latin-1"))
    return None


@app.get("/plaintext")
def plaintext():
    return text(200, c.PLAINTEXT)


@app.get("/delay")
def delay():
    ms = c.delay_ms(g.q)
    time.sleep(ms / 1000.0)
    return text(200, str(ms))


@app.get("/hash")
def hash_file():
    file_id, wait = c.hash_request(g.q)
    if wait:
        time.sleep(wait / 1000.0)
    try:
        with open(c.corpus_path(file_id), "rb") as f:
            data = f.read()
    except OSError:
        return text(500, f"cannot read file {file_id}")
    return text(200, hashlib.sha512(data).hexdigest())


@app.get("/enrich")
def enrich():
    key = c.enrich_key(g.q)
    try:
        resp = session().get(
            f"{c.DOWNSTREAM_URL}/value",
            params={"key": key},
            timeout=c.DOWNSTREAM_TIMEOUT_S,
        )
    except requests.Timeout:
        return text(504, c.DOWNSTREAM_TIMEOUT_TEXT)
    except requests.RequestException as e:
        return text(502, f"downstream failed: {e!r}")
    if not 200 <= resp.status_code < 300:
        return text(502, f"downstream answered {resp.status_code}")
    return text(200, f"{key}={resp.text}")


# /aggregate's calls run on a bounded pool of threads per worker process (IOBOUND_FANOUT_THREADS,
# the manifest's tunable), each with its requests Session, as a thread-per-request service
# fans out with an executor. A blocking call that has started cannot be interrupted: on the
# first failure the calls not yet started are cancelled and the running ones are left to end.
_fanout = concurrent.futures.ThreadPoolExecutor(
    max_workers=int(os.environ.get("IOBOUND_FANOUT_THREADS") or 64),
    thread_name_prefix="fanout",
)


class DownstreamStatus(Exception):
    """A downstream answer that was not 2xx."""


def _call(key):
    resp = session().get(
        f"{c.DOWNSTREAM_URL}/value",
        params={"key": key},
        timeout=c.DOWNSTREAM_TIMEOUT_S,
    )
    if not 200 <= resp.status_code < 300:
        raise DownstreamStatus(f"downstream answered {resp.status_code}")
    return resp.text


@app.get("/aggregate")
def aggregate():
    keys = c.aggregate_keys(g.q)
    calls = [_fanout.submit(_call, k) for k in keys]
    done, _ = concurrent.futures.wait(
        calls, return_when=concurrent.futures.FIRST_EXCEPTION
    )
    failed = next((f for f in calls if f in done and f.exception()), None)
    if failed is None:
        return Response(
            c.json_bytes([f.result() for f in calls]),
            status=200,
            content_type="application/json",
        )
    for f in calls:
        f.cancel()
    e = failed.exception()
    if isinstance(e, requests.Timeout):
        return text(504, c.DOWNSTREAM_TIMEOUT_TEXT)
    if isinstance(e, DownstreamStatus):
        return text(502, str(e))
    return text(502, f"downstream failed: {e!r}")


def _sql(statement):
    """The contract's statements use $n; psycopg's placeholders are %s."""
    for n in (2, 1):
        statement = statement.replace(f"${n}", "%s")
    return statement


def _one(sql, args, status=200):
    with pool().connection() as conn:
        row = conn.execute(_sql(sql), args).fetchone()
    if row is None:
        return text(404, "no such message")
    return _json({"id": row[0], "text": row[1]}, status)


def _json(value, status=200):
    return Response(c.json_bytes(value), status=status, mimetype="application/json")


def _body():
    if (request.content_length or 0) > c.MAX_BODY_BYTES:
        return None, text(413, f"body over {c.MAX_BODY_BYTES} bytes")
    data = request.stream.read(c.MAX_BODY_BYTES + 1)
    if len(data) > c.MAX_BODY_BYTES:
        return None, text(413, f"body over {c.MAX_BODY_BYTES} bytes")
    return c.message_text(data), None


@app.get("/messages")
def list_messages():
    limit = c.message_limit(g.q)
    with pool().connection() as conn:
        rows = conn.execute(_sql(c.SQL_LIST), (limit,)).fetchall()
    return _json([{"id": r[0], "text": r[1]} for r in rows])


@app.post("/messages")
def create():
    body, error = _body()
    return error or _one(c.SQL_CREATE, (body,), 201)


@app.get("/messages/<raw_id>")
def read(raw_id):
    return _one(c.SQL_GET, (c.message_id(raw_id),))


@app.put("/messages/<raw_id>")
def update(raw_id):
    msg_id = c.message_id(raw_id)
    body, error = _body()
    return error or _one(c.SQL_UPDATE, (body, msg_id))


@app.delete("/messages/<raw_id>")
def delete(raw_id):
    msg_id = c.message_id(raw_id)
    with pool().connection() as conn:
        cur = conn.execute(_sql(c.SQL_DELETE), (msg_id,))
        gone = cur.rowcount
    return text(404, "no such message") if gone == 0 else Response(status=204)
