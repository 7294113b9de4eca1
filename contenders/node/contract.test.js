'use strict';
// Run with `node --test contenders/node/` (./iobound test does).
const test = require('node:test');
const assert = require('node:assert');
const { delayMs, hashId, hashDelayMs, enrichKey, BadRequest } = require('./contract');

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

test('hash ids stay inside the corpus', () => {
  assert.strictEqual(hashId('0', 10), 0);
  assert.strictEqual(hashId('9', 10), 9);
  for (const bad of [null, '', '10', '-1', 'abc', '1.bin', '../../etc/passwd', '99999999999999999999', ' 1']) {
    assert.throws(() => hashId(bad, 10), BadRequest, String(bad));
  }
  assert.strictEqual(hashDelayMs(null), 0);
  assert.strictEqual(hashDelayMs('300'), 300);
  assert.throws(() => hashDelayMs('60001'), BadRequest);
  assert.throws(() => hashDelayMs(''), BadRequest);
});

test('enrich keys are checked', () => {
  assert.strictEqual(enrichKey('fast-abc_1'), 'fast-abc_1');
  assert.strictEqual(enrichKey('k'.repeat(64)), 'k'.repeat(64));
  for (const bad of [null, '', 'k'.repeat(65), 'a b', '../admin', 'été', 'a/b', 'a\n']) {
    assert.throws(() => enrichKey(bad), BadRequest, String(bad));
  }
});
