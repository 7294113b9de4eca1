"use strict";
// Input rules of the iobound contract (contract/README.md), shared by the Node contenders.

const PLAINTEXT = "Hello, World!";
const MAX_DELAY_MS = 60000;

class BadRequest extends Error {}

function decimal(raw, name, max) {
  if (raw.length > 10 || !/^[0-9]+$/.test(raw) || Number(raw) > max) {
    throw new BadRequest(`${name} must be an integer between 0 and ${max}`);
  }
  return Number(raw);
}

/** Parses the ms query parameter of /delay: a decimal integer in 0..60000. */
function delayMs(raw) {
  if (raw === null || raw === undefined || raw === "") {
    throw new BadRequest("query parameter ms is required, e.g. /delay?ms=100");
  }
  return decimal(raw, "ms", MAX_DELAY_MS);
}

/** The optional delayMs of /hash: absent means 0, otherwise as /delay's ms. */
function hashDelayMs(raw) {
  return raw === null || raw === undefined
    ? 0
    : decimal(raw, "delayMs", MAX_DELAY_MS);
}

/** The id of /hash: a decimal integer naming a corpus file, 0..files-1. */
function hashId(raw, files) {
  if (raw === null || raw === undefined || raw === "") {
    throw new BadRequest("query parameter id is required, e.g. /hash?id=42");
  }
  return decimal(raw, "id", files - 1);
}

/** The key of /enrich: 1..64 characters of A-Z a-z 0-9 - _. */
function enrichKey(raw) {
  if (typeof raw !== "string" || !/^[A-Za-z0-9_-]{1,64}$/.test(raw)) {
    throw new BadRequest("key must be 1..64 characters of A-Z a-z 0-9 - _");
  }
  return raw;
}

/** The most keys one /aggregate may name. */
const MAX_AGGREGATE_KEYS = 16;

/** The keys of /aggregate: 1..16 comma-separated keys, each as for /enrich. */
function aggregateKeys(raw) {
  const keys = typeof raw === "string" ? raw.split(",") : [""];
  if (keys.length > MAX_AGGREGATE_KEYS) {
    throw new BadRequest(
      `keys must be 1 to ${MAX_AGGREGATE_KEYS} comma-separated keys`,
    );
  }
  return keys.map(enrichKey);
}

const DEFAULT_LIMIT = 20;
const MAX_LIMIT = 100;
const MAX_TEXT = 1000;
const MAX_BODY_BYTES = 64 * 1024;
const MAX_ID = 9223372036854775807n;

/** The limit of GET /messages: absent means 20, otherwise 1..100. */
function messageLimit(raw) {
  if (raw === null || raw === undefined) return DEFAULT_LIMIT;
  const n = decimal(raw, "limit", MAX_LIMIT);
  if (n < 1)
    throw new BadRequest(`limit must be an integer between 1 and ${MAX_LIMIT}`);
  return n;
}

/** The id in /messages/{id}: 1..19 decimal digits, at least 1, within 64 bits (as a string). */
function messageId(raw) {
  if (
    typeof raw !== "string" ||
    !/^[0-9]{1,19}$/.test(raw) ||
    BigInt(raw) < 1n ||
    BigInt(raw) > MAX_ID
  ) {
    throw new BadRequest("id must be a positive integer");
  }
  return BigInt(raw).toString();
}

/** The text of a parsed create/update body: a string of 1..1000 characters (code points). */
function messageText(body) {
  const text =
    body !== null && typeof body === "object" && !Array.isArray(body)
      ? body.text
      : undefined;
  // U+0000 cannot be stored in PostgreSQL text: refused like any other invalid text.
  if (
    typeof text !== "string" ||
    text.length === 0 ||
    [...text].length > MAX_TEXT ||
    text.includes("\u0000")
  ) {
    throw new BadRequest(
      `body must be a JSON object with "text": a string of 1..${MAX_TEXT} characters`,
    );
  }
  return text;
}

module.exports = {
  PLAINTEXT,
  MAX_DELAY_MS,
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
};
