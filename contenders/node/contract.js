'use strict';
// Input rules of the iobound contract (contract/README.md), shared by the Node contenders.

const PLAINTEXT = 'Hello, World!';
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
  if (raw === null || raw === undefined || raw === '') {
    throw new BadRequest('query parameter ms is required, e.g. /delay?ms=100');
  }
  return decimal(raw, 'ms', MAX_DELAY_MS);
}

/** The optional delayMs of /hash: absent means 0, otherwise as /delay's ms. */
function hashDelayMs(raw) {
  return raw === null || raw === undefined ? 0 : decimal(raw, 'delayMs', MAX_DELAY_MS);
}

/** The id of /hash: a decimal integer naming a corpus file, 0..files-1. */
function hashId(raw, files) {
  if (raw === null || raw === undefined || raw === '') {
    throw new BadRequest('query parameter id is required, e.g. /hash?id=42');
  }
  return decimal(raw, 'id', files - 1);
}

/** The key of /enrich: 1..64 characters of A-Z a-z 0-9 - _. */
function enrichKey(raw) {
  if (typeof raw !== 'string' || !/^[A-Za-z0-9_-]{1,64}$/.test(raw)) {
    throw new BadRequest('key must be 1..64 characters of A-Z a-z 0-9 - _');
  }
  return raw;
}

module.exports = { PLAINTEXT, MAX_DELAY_MS, BadRequest, delayMs, hashDelayMs, hashId, enrichKey };
