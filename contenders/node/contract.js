'use strict';
// Input rules of the iobound contract (contract/README.md), shared by the Node contenders.

const PLAINTEXT = 'Hello, World!';
const MAX_DELAY_MS = 60000;

class BadRequest extends Error {}

/** Parses the ms query parameter of /delay: a decimal integer in 0..60000. */
function delayMs(raw) {
  if (raw === null || raw === undefined || raw === '') {
    throw new BadRequest('query parameter ms is required, e.g. /delay?ms=100');
  }
  if (raw.length > 6 || !/^[0-9]+$/.test(raw)) {
    throw new BadRequest(`ms must be an integer between 0 and ${MAX_DELAY_MS}`);
  }
  const value = Number(raw);
  if (value > MAX_DELAY_MS) {
    throw new BadRequest(`ms must be an integer between 0 and ${MAX_DELAY_MS}`);
  }
  return value;
}

module.exports = { PLAINTEXT, MAX_DELAY_MS, BadRequest, delayMs };
