/**
 * What the fuzz tests share: a seeded PRNG (so a failure replays with
 * `KINGLET_FUZZ_SEED=<seed>`), the number of cases (`KINGLET_FUZZ_CASES`),
 * mutations of valid inputs (truncate, flip bytes, insert garbage, duplicate
 * or delete a slice, a huge line), and a heap measurement after a full
 * garbage collection.
 *
 * @module
 */
import v8 from "node:v8";
import vm from "node:vm";

/** The seed of this run: `KINGLET_FUZZ_SEED`, else a fixed one so CI is repeatable. */
export function fuzzSeed(): number {
  const seed = Number(Deno.env.get("KINGLET_FUZZ_SEED") ?? 20_261_123);
  if (!Number.isSafeInteger(seed)) {
    throw new TypeError(`KINGLET_FUZZ_SEED must be an integer, got ${seed}`);
  }
  return seed;
}

/** Cases per fuzz test: `KINGLET_FUZZ_CASES`, else `fallback`. */
export function fuzzCases(fallback: number): number {
  const cases = Number(Deno.env.get("KINGLET_FUZZ_CASES") ?? fallback);
  if (!Number.isSafeInteger(cases) || cases < 1) {
    throw new TypeError(`KINGLET_FUZZ_CASES must be a positive integer, got ${cases}`);
  }
  return cases;
}

/** mulberry32: small, fast and good enough to drive mutations. */
export class Prng {
  #state: number;

  constructor(seed: number) {
    this.#state = seed >>> 0;
  }

  /** A float in [0, 1). */
  next(): number {
    this.#state = (this.#state + 0x6d2b79f5) >>> 0;
    let t = this.#state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** An integer in [0, n). */
  int(n: number): number {
    return Math.floor(this.next() * n);
  }

  chance(p: number): boolean {
    return this.next() < p;
  }

  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)]!;
  }

  bytes(n: number): Uint8Array {
    return Uint8Array.from({ length: n }, () => this.int(256));
  }

  /** `n` characters drawn from `alphabet`. */
  text(n: number, alphabet: string): string {
    let out = "";
    for (let i = 0; i < n; i++) out += alphabet[this.int(alphabet.length)];
    return out;
  }
}

/** Characters that mean something to YAML or JSON, plus controls and non-ASCII. */
export const NASTY = ":{}[],&*#?|-<>=!%@`\"'\\\n\t\r \u0000\u00e9\u2028\ud83d\ude00";

/** One mutation of `text`, and its name for failure messages. */
export function mutateText(rng: Prng, text: string): { text: string; how: string } {
  const at = rng.int(text.length + 1);
  const span = rng.int(Math.min(64, text.length - at) + 1);
  switch (rng.int(7)) {
    case 0:
      return { text: text.slice(0, at), how: `truncate at ${at}` };
    case 1: {
      if (text.length === 0) return { text: "\u0000", how: "nul into empty" };
      const i = rng.int(text.length);
      const flipped = String.fromCharCode(text.charCodeAt(i) ^ (1 << rng.int(8)));
      return { text: text.slice(0, i) + flipped + text.slice(i + 1), how: `flip char ${i}` };
    }
    case 2: {
      const garbage = rng.text(1 + rng.int(16), NASTY);
      return { text: text.slice(0, at) + garbage + text.slice(at), how: `insert at ${at}` };
    }
    case 3:
      return {
        text: text.slice(0, at) + text.slice(at, at + span).repeat(2) + text.slice(at + span),
        how: `duplicate ${span} at ${at}`,
      };
    case 4:
      return { text: text.slice(0, at) + text.slice(at + span), how: `delete ${span} at ${at}` };
    case 5: {
      const huge = rng.pick(["a", "#", "[", "{", " ", "9"]).repeat(3_000 + rng.int(30_000));
      return { text: text.slice(0, at) + huge + text.slice(at), how: `huge line at ${at}` };
    }
    default: {
      const lines = text.split("\n");
      const i = rng.int(lines.length);
      const j = rng.int(lines.length);
      [lines[i], lines[j]] = [lines[j]!, lines[i]!];
      return { text: lines.join("\n"), how: `swap lines ${i} and ${j}` };
    }
  }
}

/** One mutation of `bytes` (which may leave invalid UTF-8), and its name. */
export function mutateBytes(rng: Prng, bytes: Uint8Array): { bytes: Uint8Array; how: string } {
  const at = rng.int(bytes.length + 1);
  switch (rng.int(4)) {
    case 0:
      return { bytes: bytes.slice(0, at), how: `truncate at ${at}` };
    case 1: {
      const out = bytes.slice();
      const flips = 1 + rng.int(4);
      for (let k = 0; k < flips && out.length; k++) out[rng.int(out.length)]! ^= 1 << rng.int(8);
      return { bytes: out, how: `flip ${flips} bits` };
    }
    case 2: {
      const garbage = rng.bytes(1 + rng.int(32));
      const out = new Uint8Array(bytes.length + garbage.length);
      out.set(bytes.subarray(0, at));
      out.set(garbage, at);
      out.set(bytes.subarray(at), at + garbage.length);
      return { bytes: out, how: `insert ${garbage.length} bytes at ${at}` };
    }
    default: {
      const out = bytes.slice();
      out.copyWithin(at, rng.int(bytes.length + 1));
      return { bytes: out, how: `copy within at ${at}` };
    }
  }
}

let gc: (() => void) | undefined;

/** Runs a full garbage collection (V8's `gc()`, exposed on first use). */
export function collectGarbage(): void {
  if (!gc) {
    v8.setFlagsFromString("--expose-gc");
    gc = vm.runInNewContext("gc") as () => void;
  }
  gc();
}

/** V8 heap in use after a full garbage collection, in MiB. */
export function heapAfterGcMiB(): number {
  collectGarbage();
  return Deno.memoryUsage().heapUsed / (1024 * 1024);
}
