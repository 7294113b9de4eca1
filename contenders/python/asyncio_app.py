"""python-asyncio: the iobound contract on FastAPI, served by uvicorn on uvloop with httptools.

One event loop: /delay is asyncio.sleep, files are read in the loop's default thread pool
(asyncio.to_thread) so the loop never blocks on the disk, the downstream call goes through one
shared httpx.AsyncClient and the database through asyncpg's pool (statements are prepared and
cached per connection by asyncpg itself).
"""

import asyncio
import hashlib
from contextlib import asynccontextmanager

import asyncpg
import httpx
from fastapi import FastAPI, Request
from fastapi.responses import PlainTextResponse, Response

import contract as c
from runtime_report import processes, runtime_line


def text(status, body):
    return PlainTextResponse(body, status_code=status)


def json_response(value, status=200):
    # Serialised by the contenders' JSON library (tunable `json`), not FastAPI's encoder.
    return Response(
        c.json_bytes(value), status_code=status, media_type="application/json"
    )


@asynccontextmanager
async def lifespan(app):
    print(
        runtime_line(
            processes(),
            "event loops, one per uvicorn worker process (uvloop)",
            processes=processes(),
        ),
        flush=True,
    )
    db = c.db_settings()
    # Connections open on first use (min_size=0): the server starts without a database.
    app.state.db = await asyncpg.create_pool(
        host=db["host"],
        port=db["port"],
        database=db["dbname"],
        user=db["user"],
        password=db["password"],
        min_size=0,
        max_size=db["pool"],
    )
    # httpx's default pool holds 100 connections; under load a service calling one downstream
    # raises it, as httpx's documentation on resource limits describes.
    limits = httpx.Limits(max_connections=2000, max_keepalive_connections=2000)
    app.state.http = httpx.AsyncClient(timeout=c.DOWNSTREAM_TIMEOUT_S, limits=limits)
    yield
    await app.state.http.aclose()
    await app.state.db.close()


# redirect_slashes off: "/plaintext/" is bad input (4xx), never a redirect.
api = FastAPI(
    lifespan=lifespan,
    docs_url=None,
    redoc_url=None,
    openapi_url=None,
    redirect_slashes=False,
)


async def _reject(send, body):
    await send(
        {
            "type": "http.response.start",
            "status": 400,
            "headers": [
                (b"content-type", b"text/plain; charset=utf-8"),
                (b"content-length", str(len(body)).encode()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


async def contract_rules(scope, receive, send):
    """Unclean paths and malformed query strings are bad input, before routing. A plain ASGI
    wrapper: Starlette's @api.middleware("http") (BaseHTTPMiddleware) costs a fifth of the
    throughput on /plaintext here (measured with 64 users: 2,436 req/s through it, 10,084
    through this wrapper)."""
    if scope["type"] == "http":
        if not c.clean_path(scope["path"]):
            return await _reject(
                send, b"path must be clean: no '.', '..' or empty segments"
            )
        try:
            scope.setdefault("state", {})["q"] = c.query(
                scope["query_string"].decode("latin-1")
            )
        except c.BadRequest as e:
            return await _reject(send, str(e).encode())
    return await api(scope, receive, send)


app = contract_rules


@api.exception_handler(c.BadRequest)
async def bad_request(request, exc):
    return text(400, str(exc))


@api.get("/plaintext")
async def plaintext():
    return text(200, c.PLAINTEXT)


@api.get("/delay")
async def delay(request: Request):
    ms = c.delay_ms(request.state.q)
    await asyncio.sleep(ms / 1000.0)
    return text(200, str(ms))


def _read(path):
    with open(path, "rb") as f:
        return f.read()


@api.get("/hash")
async def hash_file(request: Request):
    file_id, wait = c.hash_request(request.state.q)
    if wait:
        await asyncio.sleep(wait / 1000.0)
    try:
        data = await asyncio.to_thread(_read, c.corpus_path(file_id))
    except OSError:
        return text(500, f"cannot read file {file_id}")
    return text(200, hashlib.sha512(data).hexdigest())


@api.get("/enrich")
async def enrich(request: Request):
    key = c.enrich_key(request.state.q)
    try:
        resp = await request.app.state.http.get(
            f"{c.DOWNSTREAM_URL}/value", params={"key": key}
        )
    except httpx.TimeoutException:
        return text(504, c.DOWNSTREAM_TIMEOUT_TEXT)
    except httpx.HTTPError as e:
        return text(502, f"downstream failed: {e!r}")
    if not 200 <= resp.status_code < 300:
        return text(502, f"downstream answered {resp.status_code}")
    return text(200, f"{key}={resp.text}")


class DownstreamStatus(Exception):
    """A downstream answer that was not 2xx."""


@api.get("/aggregate")
async def aggregate(request: Request):
    """The fan-out: a task per key in an asyncio.TaskGroup. The first call to fail cancels the
    group's other tasks (httpx closes their connections) and the group raises it; the values
    come back in key order."""
    keys = c.aggregate_keys(request.state.q)
    http = request.app.state.http

    async def call(key):
        resp = await http.get(f"{c.DOWNSTREAM_URL}/value", params={"key": key})
        if not 200 <= resp.status_code < 300:
            raise DownstreamStatus(f"downstream answered {resp.status_code}")
        return resp.text

    try:
        async with asyncio.TaskGroup() as group:
            tasks = [group.create_task(call(k)) for k in keys]
    except ExceptionGroup as failures:
        first = failures.exceptions[0]
        if isinstance(first, httpx.TimeoutException):
            return text(504, c.DOWNSTREAM_TIMEOUT_TEXT)
        if isinstance(first, DownstreamStatus):
            return text(502, str(first))
        return text(502, f"downstream failed: {first!r}")
    return json_response([t.result() for t in tasks])


async def _body(request):
    """A create/update body: over 64 KiB is 413, otherwise its validated text."""
    size = 0
    chunks = []
    async for chunk in request.stream():
        size += len(chunk)
        if size > c.MAX_BODY_BYTES:
            return None, text(413, f"body over {c.MAX_BODY_BYTES} bytes")
        chunks.append(chunk)
    return c.message_text(b"".join(chunks)), None


def _one(row, status=200):
    if row is None:
        return text(404, "no such message")
    return json_response({"id": row["id"], "text": row["text"]}, status)


@api.get("/messages")
async def list_messages(request: Request):
    limit = c.message_limit(request.state.q)
    rows = await request.app.state.db.fetch(c.SQL_LIST, limit)
    return json_response([{"id": r["id"], "text": r["text"]} for r in rows])


@api.post("/messages")
async def create(request: Request):
    body, error = await _body(request)
    if error:
        return error
    return _one(await request.app.state.db.fetchrow(c.SQL_CREATE, body), 201)


@api.get("/messages/{raw_id}")
async def read(request: Request, raw_id: str):
    return _one(await request.app.state.db.fetchrow(c.SQL_GET, c.message_id(raw_id)))


@api.put("/messages/{raw_id}")
async def update(request: Request, raw_id: str):
    msg_id = c.message_id(raw_id)
    body, error = await _body(request)
    if error:
        return error
    return _one(await request.app.state.db.fetchrow(c.SQL_UPDATE, body, msg_id))


@api.delete("/messages/{raw_id}")
async def delete(request: Request, raw_id: str):
    status = await request.app.state.db.execute(c.SQL_DELETE, c.message_id(raw_id))
    if status.endswith(" 0"):
        return text(404, "no such message")
    return Response(status_code=204)


@api.api_route(
    "/{rest:path}", methods=["GET", "POST", "PUT", "DELETE", "PATCH", "HEAD", "OPTIONS"]
)
async def not_found(rest: str):
    return text(404, "not found")
