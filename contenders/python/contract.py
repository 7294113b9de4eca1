"""Input rules of the iobound contract (contract/README.md), shared by both Python contenders."""

import json
import os
import re
from urllib.parse import parse_qsl

PLAINTEXT = "Hello, World!"
MAX_DELAY_MS = 60000
MAX_TEXT = 1000
MAX_BODY_BYTES = 64 * 1024

CORPUS_DIR = os.environ.get("IOBOUND_CORPUS_DIR", ".")
CORPUS_FILES = int(os.environ.get("IOBOUND_CORPUS_FILES", "0") or 0)
DOWNSTREAM_URL = os.environ.get("IOBOUND_DOWNSTREAM_URL") or "http://127.0.0.1:8081"
DOWNSTREAM_TIMEOUT_S = (
    int(os.environ.get("IOBOUND_DOWNSTREAM_TIMEOUT_MS") or 2000) / 1000.0
)
# The answer (504) when a downstream call passes that timeout, from /enrich and /aggregate.
DOWNSTREAM_TIMEOUT_TEXT = (
    f"downstream did not answer within {int(DOWNSTREAM_TIMEOUT_S * 1000)} ms"
)

SQL_LIST = "SELECT id, text FROM messages ORDER BY id DESC LIMIT $1"
SQL_GET = "SELECT id, text FROM messages WHERE id = $1"
SQL_CREATE = "INSERT INTO messages (text) VALUES ($1) RETURNING id, text"
SQL_UPDATE = "UPDATE messages SET text = $1 WHERE id = $2 RETURNING id, text"
SQL_DELETE = "DELETE FROM messages WHERE id = $1"

# IOBOUND_JSON (the contenders' tunable `json`): "json" is the standard library, "orjson" the
# Rust-backed library TechEmpower's FastAPI entry uses for speed. Both parse and write the same
# documents; orjson refuses what is not strict JSON (NaN, lone surrogates), which the checks
# below refuse anyway.
JSON_LIBRARY = os.environ.get("IOBOUND_JSON") or "json"
if JSON_LIBRARY == "orjson":
    import orjson

    _loads = orjson.loads

    def json_bytes(value):
        return orjson.dumps(value)

elif JSON_LIBRARY == "json":
    _loads = json.loads

    def json_bytes(value):
        return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()

else:
    raise SystemExit(f"IOBOUND_JSON must be json or orjson, got {JSON_LIBRARY!r}")

_DIGITS = re.compile(r"[0-9]+\Z")
_KEY = re.compile(r"[A-Za-z0-9_-]{1,64}\Z")
_BAD_ESCAPE = re.compile(r"%(?![0-9A-Fa-f]{2})")


class BadRequest(ValueError):
    """Input the contract rejects with 400."""


def db_settings(share=1):
    """Connection settings from the environment; a multi-process contender divides the pool."""
    pool = int(os.environ.get("IOBOUND_DB_POOL") or 10)
    return {
        "host": os.environ.get("IOBOUND_DB_HOST") or "127.0.0.1",
        "port": int(os.environ.get("IOBOUND_DB_PORT") or 5432),
        "dbname": os.environ.get("IOBOUND_DB_NAME") or "iobound",
        "user": os.environ.get("IOBOUND_DB_USER") or "iobound",
        "password": os.environ.get("IOBOUND_DB_PASSWORD") or "",
        "pool": max(1, pool // max(1, share)),
    }


def query(raw):
    """The first value of each parameter; a % not followed by two hex digits is bad input."""
    if _BAD_ESCAPE.search(raw or ""):
        raise BadRequest("malformed query string: a % not followed by two hex digits")
    out = {}
    for k, v in parse_qsl(raw or "", keep_blank_values=True):
        out.setdefault(k, v)
    return out


def decimal(raw, name, maximum):
    if raw is None or len(raw) > 10 or not _DIGITS.match(raw):
        raise BadRequest(f"{name} must be an integer between 0 and {maximum}")
    value = int(raw)
    if value > maximum:
        raise BadRequest(f"{name} must be an integer between 0 and {maximum}")
    return value


def delay_ms(q):
    if not q.get("ms"):
        raise BadRequest("query parameter ms is required, e.g. /delay?ms=100")
    return decimal(q["ms"], "ms", MAX_DELAY_MS)


def hash_request(q):
    """(file id, wait in ms) of /hash."""
    if not q.get("id"):
        raise BadRequest("query parameter id is required, e.g. /hash?id=42")
    if CORPUS_FILES == 0:
        raise BadRequest("there is no corpus (IOBOUND_CORPUS_FILES is 0)")
    file_id = decimal(q["id"], "id", CORPUS_FILES - 1)
    wait = decimal(q["delayMs"], "delayMs", MAX_DELAY_MS) if "delayMs" in q else 0
    return file_id, wait


def corpus_path(file_id):
    """The file name comes from the parsed number, never from the input."""
    return os.path.join(CORPUS_DIR, f"{int(file_id)}.bin")


def enrich_key(q):
    key = q.get("key")
    if key is None or not _KEY.match(key):
        raise BadRequest("key must be 1..64 characters of A-Z a-z 0-9 - _")
    return key


MAX_AGGREGATE_KEYS = 16


def aggregate_keys(q):
    """The keys of /aggregate: 1..16 comma-separated keys, each as for /enrich."""
    keys = q.get("keys", "").split(",")
    if len(keys) > MAX_AGGREGATE_KEYS:
        raise BadRequest(f"keys must be 1 to {MAX_AGGREGATE_KEYS} comma-separated keys")
    return [enrich_key({"key": k}) for k in keys]


def message_limit(q):
    if "limit" not in q:
        return 20
    n = decimal(q["limit"], "limit", 100)
    if n < 1:
        raise BadRequest("limit must be an integer between 1 and 100")
    return n


def message_id(raw):
    if not raw or len(raw) > 19 or not _DIGITS.match(raw):
        raise BadRequest("id must be a positive integer")
    value = int(raw)
    if value < 1 or value > 2**63 - 1:
        raise BadRequest("id must be a positive integer")
    return value


def message_text(body):
    """The text of a create/update body: a JSON object whose "text" is a string of 1..1000
    characters (code points) without U+0000, which PostgreSQL text cannot hold."""
    bad = BadRequest(
        f'body must be a JSON object whose "text" is a string of 1..{MAX_TEXT} characters'
    )
    try:
        parsed = _loads(body)
    except (ValueError, RecursionError):  # orjson.JSONDecodeError is a ValueError
        raise bad from None
    text = parsed.get("text") if isinstance(parsed, dict) else None
    if not isinstance(text, str) or not text or len(text) > MAX_TEXT or "\x00" in text:
        raise bad
    try:
        text.encode("utf-8")  # a lone surrogate ("\\ud800") has no UTF-8 form
    except UnicodeEncodeError:
        raise bad from None
    return text


def clean_path(path):
    """Unclean paths ("/a/../b", "//x") are bad input."""
    if not path.startswith("/"):
        return False
    if path == "/":
        return True
    return all(seg not in ("", ".", "..") for seg in path[1:].split("/"))
