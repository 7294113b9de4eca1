'use strict';
// Run with `node --test contenders/node/` (./iobound test does).
const test = require('node:test');
const assert = require('node:assert');
const { delayMs, BadRequest } = require('./contract');

test('accepts the whole range', () => {
  assert.strictEqual(delayMs('0'), 0);
  assert.strictEqual(delayMs('100'), 100);
  assert.strictEqual(delayMs('60000'), 60000);
  assert.strictEqual(delayMs('007'), 7);
});

test('rejects everything else', () => {
  for (const bad of [null, undefined, '', '-1', '+5', '1.5', 'abc', '60001', '99999999999999999999', ' 5', '５', '1e3', '0x10']) {
    assert.throws(() => delayMs(bad), BadRequest, String(bad));
  }
});
