/**
 * Fuzzing of the watch-stream decoder (lib/kube/watch.ts): thousands of
 * generated watch bodies, mutated (truncated, bits flipped, garbage and
 * invalid UTF-8 inserted, huge lines) and cut into random chunks, some ended
 * by a connection failure, some abandoned midway. Whatever arrives, the
 * decoder yields only well-formed events or throws one of its typed errors,
 * never quotes more than a few hundred characters, releases the body, and
 * leaves the heap where it found it. Pure unit test: no cluster.
 *
 *   deno test -A tests/reliability/fuzz_watch_decoder_test.ts
 *   KINGLET_FUZZ_SEED=7 KINGLET_FUZZ_CASES=50000 deno test -A tests/reliability/fuzz_watch_decoder_test.ts
 */
import assert from "node:assert/strict";
import { ApiError, TransportError, WatchDecodeError } from "../../lib/kube/errors.ts";
import type { KubeObject } from "../../lib/kube/types.ts";
import { decodeWatchStream } from "../../lib/kube/watch.ts";
import { fuzzCases, fuzzSeed, heapAfterGcMiB, mutateBytes, NASTY, Prng } from "./_fuzz.ts";
import { figure, fixed1 } from "./_measure.ts";

Deno.test.sanitizer({ ops: true, resources: true });

const TYPES = ["ADDED", "MODIFIED", "DELETED", "BOOKMARK"] as const;
const PATH = "/apis/kinglet.dev/v1alpha1/webapps";
/** A decode error quotes at most 200 characters of what arrived, plus its explanation. */
const MAX_MESSAGE = 700;

interface Generated {
  body: Uint8Array;
  /** What an intact body decodes to: events, then possibly the ERROR that ends it. */
  events: { type: string; object: KubeObject }[];
  error?: { code: number };
}

function randomValue(rng: Prng, depth: number): unknown {
  switch (rng.int(depth > 2 ? 4 : 6)) {
    case 0:
      return rng.text(rng.int(24), "abcxyz019-_./" + NASTY);
    case 1:
      return rng.chance(0.5) ? rng.int(1_000_000) : rng.next() * 1e6 - 5e5;
    case 2:
      return rng.chance(0.5);
    case 3:
      return null;
    case 4:
      return Array.from({ length: rng.int(4) }, () => randomValue(rng, depth + 1));
    default:
      return Object.fromEntries(
        Array.from({ length: rng.int(4) }, (_, i) => [`k${i}`, randomValue(rng, depth + 1)]),
      );
  }
}

function generate(rng: Prng): Generated {
  const events: Generated["events"] = [];
  const lines: string[] = [];
  const count = rng.int(12);
  for (let i = 0; i < count; i++) {
    const type = rng.pick(TYPES);
    const object: KubeObject = {
      apiVersion: "kinglet.dev/v1alpha1",
      kind: "WebApp",
      metadata: {
        name: `app-${rng.int(1000)}`,
        namespace: "fuzz",
        resourceVersion: String(1000 + i),
        labels: { tier: rng.text(rng.int(8), "abc\u00e9\ud83d\ude00") },
      },
      spec: randomValue(rng, 0) as Record<string, unknown>,
    };
    events.push({ type, object });
    lines.push(JSON.stringify({ type, object }));
    if (rng.chance(0.1)) lines.push(rng.pick(["", "   ", "\r"]));
  }
  let error: Generated["error"];
  if (rng.chance(0.15)) {
    const code = rng.pick([410, 500, 429]);
    error = { code };
    lines.push(JSON.stringify({
      type: "ERROR",
      object: { kind: "Status", code, reason: code === 410 ? "Expired" : "", message: "boom" },
    }));
  }
  const text = lines.join("\n") + (rng.chance(0.8) ? "\n" : "");
  return { body: new TextEncoder().encode(text), events, ...(error && { error }) };
}

/** A body delivering `bytes` in random chunks, then ending or failing; records a cancel. */
function body(rng: Prng, bytes: Uint8Array, fail: boolean) {
  const chunks: Uint8Array[] = [];
  for (let at = 0; at < bytes.length;) {
    const size = 1 + rng.int(rng.chance(0.3) ? 8 : 4096);
    chunks.push(bytes.subarray(at, at + size));
    at += size;
  }
  const state = { cancelled: false, finished: false };
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      const chunk = chunks.shift();
      if (chunk) return controller.enqueue(chunk);
      state.finished = true;
      if (fail) controller.error(new TypeError("error reading a body from connection"));
      else controller.close();
    },
    cancel() {
      state.cancelled = true;
    },
  });
  return { stream, state };
}

interface Outcome {
  events: { type: string; object: KubeObject }[];
  error?: unknown;
  brokeEarly: boolean;
}

async function decode(
  stream: ReadableStream<Uint8Array>,
  maxLineLength: number | undefined,
  stopAfter: number,
): Promise<Outcome> {
  const events: Outcome["events"] = [];
  try {
    for await (
      const event of decodeWatchStream(stream, {
        path: PATH,
        ...(maxLineLength !== undefined && { maxLineLength }),
      })
    ) {
      events.push(event);
      if (events.length >= stopAfter) return { events, brokeEarly: true };
    }
  } catch (error) {
    return { events, error, brokeEarly: false };
  }
  return { events, brokeEarly: false };
}

function checkEvents(events: Outcome["events"], why: string): void {
  for (const event of events) {
    assert.ok(TYPES.includes(event.type as typeof TYPES[number]), `${why}: type ${event.type}`);
    const o = event.object;
    assert.ok(typeof o === "object" && o !== null && !Array.isArray(o), `${why}: an object`);
  }
}

Deno.test("the watch decoder yields well-formed events or a typed error for any mutated stream", async () => {
  const seed = fuzzSeed();
  const cases = fuzzCases(10_000);
  const rng = new Prng(seed);
  const tally = { events: 0, decodeErrors: 0, apiErrors: 0, transportErrors: 0, clean: 0 };
  let bytesFed = 0;
  heapAfterGcMiB();
  const heapBefore = heapAfterGcMiB();
  const started = performance.now();
  for (let n = 0; n < cases; n++) {
    const generated = generate(rng);
    let bytes = generated.body;
    const hows: string[] = [];
    const mutations = rng.chance(0.2) ? 0 : 1 + rng.int(3);
    for (let m = 0; m < mutations; m++) {
      const mutated = mutateBytes(rng, bytes);
      bytes = mutated.bytes;
      hows.push(mutated.how);
    }
    const fail = rng.chance(0.1);
    const maxLineLength = rng.chance(0.2) ? 16 + rng.int(2_000) : undefined;
    const stopAfter = rng.chance(0.1) ? 1 + rng.int(3) : Infinity;
    const why = `seed ${seed} case ${n} (${hows.join(", ") || "intact"}` +
      `${fail ? ", failing" : ""}${maxLineLength ? `, max line ${maxLineLength}` : ""})`;
    const { stream, state } = body(rng, bytes, fail);
    bytesFed += bytes.length;
    const outcome = await decode(stream, maxLineLength, stopAfter);
    tally.events += outcome.events.length;
    checkEvents(outcome.events, why);
    const error = outcome.error;
    if (error === undefined) tally.clean++;
    else if (error instanceof WatchDecodeError) {
      tally.decodeErrors++;
      assert.ok(error.received.length <= 203, `${why}: quotes ${error.received.length} chars`);
    } else if (error instanceof ApiError) tally.apiErrors++;
    else if (error instanceof TransportError) {
      tally.transportErrors++;
      assert.ok(fail, `${why}: a TransportError without a connection failure: ${error.message}`);
    } else assert.fail(`${why}: untyped error ${error}`);
    if (error instanceof Error) {
      assert.ok(error.message.length <= MAX_MESSAGE, `${why}: ${error.message.length} chars`);
    }
    if (outcome.brokeEarly && !state.finished) {
      assert.ok(state.cancelled, `${why}: breaking out must cancel the body`);
    }
    // The oracle: an intact body, not cut short, decodes to exactly what was generated.
    if (mutations === 0 && !maxLineLength && stopAfter === Infinity && fail) {
      // A failure may cut off a last line that had no newline yet: a prefix arrives.
      assert.deepEqual(outcome.events, generated.events.slice(0, outcome.events.length), why);
      assert.ok(generated.events.length - outcome.events.length <= 1, why);
    } else if (mutations === 0 && !maxLineLength && stopAfter === Infinity) {
      assert.deepEqual(outcome.events, generated.events, why);
      if (generated.error) {
        assert.ok(outcome.error instanceof ApiError, `${why}: ${outcome.error}`);
        assert.equal(outcome.error.status, generated.error.code);
        if (generated.error.code === 410) assert.equal(outcome.error.reason, "Gone");
      } else assert.equal(outcome.error, undefined, `${why}: ${outcome.error}`);
    }
  }
  const ms = performance.now() - started;
  const heapGrowth = heapAfterGcMiB() - heapBefore;
  figure(
    `fuzz watch decoder: ${cases} cases (seed ${seed}), ${fixed1(bytesFed / 1048576)} MiB fed ` +
      `in ${fixed1(ms / 1000)} s; ${tally.events} events, ${tally.decodeErrors} ` +
      `WatchDecodeError, ${tally.apiErrors} ApiError, ${tally.transportErrors} TransportError, ` +
      `${tally.clean} clean ends, 0 untyped; heap growth after GC ${fixed1(heapGrowth)} MiB`,
  );
  assert.ok(tally.decodeErrors > cases / 10, "the mutations reach the error paths");
  assert.ok(heapGrowth < 8, `heap grew by ${fixed1(heapGrowth)} MiB`);
});

Deno.test("a line far beyond the limit is refused once it passes the limit, and its memory is freed", async () => {
  heapAfterGcMiB();
  const heapBefore = heapAfterGcMiB();
  const limit = 1024 * 1024;
  const chunk = new TextEncoder().encode(`{"type":"ADDED","object":{"data":"${"x".repeat(65_000)}`);
  let sent = 0;
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      // 64 MiB in all if the decoder kept reading; it must stop just past 1 MiB.
      if (sent >= 1024) return controller.close();
      sent++;
      controller.enqueue(chunk);
    },
  });
  const outcome = await decode(stream, limit, Infinity);
  assert.ok(outcome.error instanceof WatchDecodeError, `got ${outcome.error}`);
  assert.match(outcome.error.message, /received more than 1048576 characters without a newline/);
  assert.ok(sent <= 20, `read ${sent} chunks of 64 KiB for a 1 MiB limit`);
  const heapGrowth = heapAfterGcMiB() - heapBefore;
  figure(
    `watch decoder, endless line: refused after ${sent} chunks (${
      fixed1(sent * chunk.length / 1048576)
    } ` +
      `MiB of a 1 MiB limit), heap growth after GC ${fixed1(heapGrowth)} MiB`,
  );
  assert.ok(heapGrowth < 4, `heap grew by ${fixed1(heapGrowth)} MiB`);
});

Deno.test("ten thousand events cut into random chunks all come through intact", async () => {
  const rng = new Prng(fuzzSeed());
  const events = Array.from({ length: 10_000 }, (_, i) => ({
    type: rng.pick(TYPES),
    object: { metadata: { name: `a-${i}`, resourceVersion: String(i) }, data: { v: "é😀" } },
  }));
  const bytes = new TextEncoder().encode(events.map((e) => JSON.stringify(e)).join("\n") + "\n");
  const started = performance.now();
  const { stream } = body(rng, bytes, false);
  const outcome = await decode(stream, undefined, Infinity);
  const ms = performance.now() - started;
  assert.equal(outcome.error, undefined);
  assert.deepEqual(outcome.events, events);
  figure(
    `watch decoder throughput: 10000 events (${fixed1(bytes.length / 1048576)} MiB) in random ` +
      `1-4096 byte chunks decoded in ${Math.round(ms)} ms`,
  );
});
