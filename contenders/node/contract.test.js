"use strict";
// Run with `node --test contenders/node/` (./iobound test does).
const test = require("node:test");
const assert = require("node:assert");
const {
  delayMs,
  hashId,
  hashDelayMs,
  enrichKey,
  aggregateKeys,
  messageLimit,
  messageId,
  messageText,
  BadRequest,
} = require("./contract");

test("accepts the whole range", () => {
  assert.strictEqual(delayMs("0"), 0);
  assert.strictEqual(delayMs("100"), 100);
  assert.strictEqual(delayMs("60000"), 60000);
  assert.strictEqual(delayMs("007"), 7);
});

test("rejects everything else", () => {
  for (const bad of [
    null,
    undefined,
    "",
    "-1",
    "+5",
    "1.5",
    "abc",
    "60001",
    "99999999999999999999",
    " 5",
    "５",
    "1e3",
    "0x10",
  ]) {
    assert.throws(() => delayMs(bad), BadRequest, String(bad));
  }
});

test("hash ids stay inside the corpus", () => {
  assert.strictEqual(hashId("0", 10), 0);
  assert.strictEqual(hashId("9", 10), 9);
  for (const bad of [
    null,
    "",
    "10",
    "-1",
    "abc",
    "1.bin",
    "../../etc/passwd",
    "99999999999999999999",
    " 1",
  ]) {
    assert.throws(() => hashId(bad, 10), BadRequest, String(bad));
  }
  assert.strictEqual(hashDelayMs(null), 0);
  assert.strictEqual(hashDelayMs("300"), 300);
  assert.throws(() => hashDelayMs("60001"), BadRequest);
  assert.throws(() => hashDelayMs(""), BadRequest);
});

test("enrich keys are checked", () => {
  assert.strictEqual(enrichKey("fast-abc_1"), "fast-abc_1");
  assert.strictEqual(enrichKey("k".repeat(64)), "k".repeat(64));
  for (const bad of [
    null,
    "",
    "k".repeat(65),
    "a b",
    "../admin",
    "été",
    "a/b",
    "a\n",
  ]) {
    assert.throws(() => enrichKey(bad), BadRequest, String(bad));
  }
});

test("message inputs follow the contract", () => {
  assert.strictEqual(messageLimit(null), 20);
  assert.strictEqual(messageLimit("100"), 100);
  for (const bad of ["", "0", "101", "-1", "ten"])
    assert.throws(() => messageLimit(bad), BadRequest, bad);
  assert.strictEqual(messageId("007"), "7");
  assert.strictEqual(messageId("9223372036854775807"), "9223372036854775807");
  for (const bad of [
    null,
    "",
    "0",
    "-1",
    "abc",
    "1.5",
    "9223372036854775808",
    "99999999999999999999",
  ]) {
    assert.throws(() => messageId(bad), BadRequest, String(bad));
  }
  assert.strictEqual(messageText({ text: "hi" }), "hi");
  const emoji = "\u{1F600}".repeat(1000); // 1,000 characters, 2,000 UTF-16 units
  assert.strictEqual(messageText({ text: emoji }), emoji);
  for (const bad of [
    null,
    [],
    ["text"],
    {},
    { text: "" },
    { text: 42 },
    { text: "a".repeat(1001) },
    { text: "a\u0000b" },
  ]) {
    assert.throws(() => messageText(bad), BadRequest, JSON.stringify(bad));
  }
});

test("aggregate keys are 1 to 16 enrich keys", () => {
  assert.deepStrictEqual(aggregateKeys("a,b-1,C_2"), ["a", "b-1", "C_2"]);
  for (const bad of [null, "", "a,,b", ",a", "a,../x", "k,".repeat(16) + "k"]) {
    assert.throws(() => aggregateKeys(bad), BadRequest, String(bad));
  }
});
