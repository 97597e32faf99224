import assert from "node:assert/strict";
import { rfc3339 } from "../../lib/_rfc3339.ts";

const DAY_MS = 86_400_000;

/** Leap days, century years, the epoch, the ends of the four-digit years and their neighbours. */
const EDGES = [
  0,
  -1,
  1,
  Date.UTC(2000, 1, 29, 23, 59, 59, 999),
  Date.UTC(2100, 1, 28, 12),
  Date.UTC(2100, 2, 1),
  Date.UTC(1900, 1, 28, 23, 59, 59, 999),
  Date.UTC(1600, 1, 29),
  Date.UTC(2024, 11, 31, 23, 59, 59, 999),
  Date.UTC(2025, 0, 1),
  -62_167_219_200_000,
  253_402_300_799_999,
];

Deno.test("rfc3339 writes what toISOString writes, at every edge and across ten thousand years", () => {
  const random = (() => {
    let seed = 24;
    return () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
  })();
  const samples = [...EDGES];
  for (let i = 0; i < 20_000; i++) {
    samples.push(Math.floor(-62_167_219_200_000 + random() * 315_569_519_999_999));
  }
  for (let day = -800; day < 800; day++) samples.push(Date.UTC(2000, 0, 1) + day * DAY_MS - 1);
  for (const ms of samples) {
    const iso = new Date(ms).toISOString();
    assert.equal(rfc3339(ms, 3), iso, `ms ${ms}`);
    assert.equal(rfc3339(ms, 0), iso.replace(/\.\d{3}Z$/, "Z"), `ms ${ms}`);
    assert.equal(rfc3339(ms, 6), iso.replace(/Z$/, "000Z"), `ms ${ms}`);
  }
});

Deno.test("rfc3339 drops fractions of a millisecond as Date does", () => {
  assert.equal(rfc3339(1_764_120_638_787.9, 3), new Date(1_764_120_638_787.9).toISOString());
  assert.equal(rfc3339(-0.5, 3), new Date(-0.5).toISOString());
});

Deno.test("rfc3339 refuses what is not a time of a four-digit year", () => {
  for (const ms of [NaN, Infinity, -Infinity, -62_167_219_200_001, 253_402_300_800_000]) {
    assert.throws(() => rfc3339(ms, 3), RangeError, `ms ${ms}`);
  }
});
