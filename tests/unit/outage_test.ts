import assert from "node:assert/strict";
import { ApiError, TransportError } from "../../lib/kube/errors.ts";
import type { KubeList, KubeObject, WatchEvent } from "../../lib/kube/types.ts";
import { setupLogging } from "../../lib/log.ts";
import { Backoff } from "../../lib/async/backoff.ts";
import { FakeClock, flushMicrotasks } from "../../lib/async/clock.ts";
import { type OutageLevel, OutageReport } from "../../lib/runtime/watcher/outage.ts";
import { type ListerWatcher, type Watcher, watcher } from "../../lib/runtime/watcher/watcher.ts";

const SERVER = "https://10.0.0.1:6443";

function recorder() {
  const lines: { level: OutageLevel; line: string; properties: Record<string, unknown> }[] = [];
  const report = new OutageReport({
    write: (level, line, properties) => lines.push({ level, line, properties }),
  });
  return { lines, report };
}

Deno.test("the first failure of each round is a warning; the other watchers' are not repeated", () => {
  const { lines, report } = recorder();
  const down = { server: SERVER, reason: "connection refused" };
  const told: boolean[] = [];
  for (let round = 1; round <= 3; round++) {
    for (let watcher = 0; watcher < 7; watcher++) {
      told.push(report.failed(down, round, 100 * round));
    }
  }
  const warnings = lines.filter((l) => l.level === "warn");
  assert.equal(warnings.length, 3);
  assert.equal(lines.length, 3);
  assert.equal(told.filter(Boolean).length, 3);
  assert.deepEqual(warnings[0]!.properties, {
    server: SERVER,
    error: "connection refused",
    delayMs: 100,
    attempt: 1,
  });
  assert.match(warnings[0]!.line, /\{server\}.*\{error\}.*next attempt in \{delayMs\} ms/);
});

Deno.test("recovery is told once, and a later outage is reported from its first round again", () => {
  const { lines, report } = recorder();
  const down = { server: SERVER, reason: "TLS failed: UnknownIssuer" };
  report.failed(down, 1, 800);
  report.failed(down, 2, 1600);
  report.recovered();
  report.recovered();
  report.failed(down, 1, 800);
  assert.deepEqual(lines.map((l) => l.level), ["warn", "warn", "info", "warn"]);
  assert.deepEqual(lines[2]!.properties, { server: SERVER, rounds: 2 });
});

Deno.test("no recovery line is written when nothing failed", () => {
  const { lines, report } = recorder();
  report.recovered();
  assert.equal(lines.length, 0);
});

/** A collection whose every list fails as an unreachable server does. */
/** Iterates `w` in the background, past its `init`, until `signal` aborts. */
function drive(w: Watcher, signal: AbortSignal): void {
  (async () => {
    for await (const _ of w.events(signal));
  })().catch(() => {});
}

function unreachable(name: string): ListerWatcher<KubeObject> {
  return {
    description: name,
    list(): Promise<KubeList> {
      return Promise.reject(
        new TransportError(`list /apis/kinglet.dev/v1alpha1/${name}?limit=500: cannot reach`, {
          server: SERVER,
          reason: "connection refused",
        }),
      );
    },
    watch(): AsyncIterable<WatchEvent> {
      throw new Error("never watched");
    },
  };
}

Deno.test("seven watchers of an unreachable server log one line per backoff round between them", async () => {
  const clock = new FakeClock();
  const { lines, report } = recorder();
  const stop = new AbortController();
  for (let i = 0; i < 7; i++) {
    const w = watcher(unreachable(`kind${i}`), {
      clock,
      outage: report,
      streamingList: "off",
      backoff: new Backoff({ initialMs: 100, maxMs: 10_000, jitter: 0.2, random: () => i / 7 }),
    });
    drive(w, stop.signal);
  }
  // Rounds at 0, ~100, ~300, ~700, ~1500 and ~3100 ms (up to 17 % later with jitter); the 7th at ~6300.
  for (let t = 0; t < 4_000; t += 50) {
    await flushMicrotasks();
    await clock.advance(50);
  }
  await flushMicrotasks();
  const warnings = lines.filter((l) => l.level === "warn");
  assert.deepEqual(warnings.map((l) => l.properties.attempt), [1, 2, 3, 4, 5, 6]);
  assert.equal(lines.length, 6, "nothing but the warning of each round");
  stop.abort();
});

Deno.test("the 429 of a resource whose storage is initializing is logged at debug, not as a warning", async () => {
  const records: { level: string; message: string }[] = [];
  await setupLogging({
    level: "debug",
    write: (line) => {
      const record = JSON.parse(line);
      records.push({ level: record.level, message: record.message });
    },
  });
  try {
    const clock = new FakeClock();
    const initializing = new ApiError({
      status: 429,
      message: "storage is (re)initializing",
      verb: "list",
      path: "/apis/kinglet.dev/v1alpha1/webapps",
    });
    const throttled = new ApiError({
      status: 429,
      message: "too many requests",
      verb: "list",
      path: "/apis/kinglet.dev/v1alpha1/webapps",
    });
    const answers: Error[] = [initializing, throttled];
    const stop = new AbortController();
    const w = watcher<KubeObject>({
      description: "webapps.kinglet.dev",
      list: () => Promise.reject(answers.shift() ?? initializing),
      watch: () => {
        throw new Error("never watched");
      },
    }, { clock, streamingList: "off", backoff: new Backoff({ initialMs: 10, jitter: 0 }) });
    drive(w, stop.signal);
    await flushMicrotasks();
    await clock.advance(10);
    await flushMicrotasks();
    stop.abort();
    const failures = records.filter((r) => /webapps\.kinglet\.dev"? failed/.test(r.message));
    assert.deepEqual(failures.map((r) => r.level), ["DEBUG", "WARN"]);
  } finally {
    await setupLogging();
  }
});
