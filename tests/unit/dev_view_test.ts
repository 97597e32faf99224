import assert from "node:assert/strict";
import {
  age,
  type DevSnapshot,
  operatorFigures,
  redraw,
  renderView,
  sumMetrics,
} from "../../hack/_dev_view.ts";

const NOW = Date.parse("2026-03-01T12:00:00Z");

const METRICS = `# HELP controller_runtime_reconcile_total Total reconciles.
# TYPE controller_runtime_reconcile_total counter
controller_runtime_reconcile_total{controller="webapp",result="success"} 40
controller_runtime_reconcile_total{controller="webapp",result="error"} 2
controller_runtime_reconcile_total{controller="databasecluster",result="success"} 8
workqueue_depth{name="webapp"} 3
workqueue_depth{name="databasecluster"} 1
process_resident_memory_bytes 50331648
`;

Deno.test("metrics are summed per name across their label sets", () => {
  const sums = sumMetrics(METRICS);
  assert.equal(sums.get("controller_runtime_reconcile_total"), 50);
  assert.equal(sums.get("workqueue_depth"), 4);
  assert.equal(sums.get("process_resident_memory_bytes"), 50331648);
  assert.equal(sumMetrics('garbage line\nx{a="b"} NaN').size, 0);
});

Deno.test("the reconcile rate is the counter's growth over the time between scrapes", () => {
  const first = sumMetrics(METRICS);
  assert.equal(operatorFigures(first, undefined, 0).reconcilesPerSecond, undefined);
  const later = sumMetrics(METRICS.replace("} 40", "} 60"));
  const figures = operatorFigures(later, first, 2_000);
  assert.deepEqual(figures, { rssBytes: 50331648, reconcilesPerSecond: 10, queueDepth: 4 });
});

Deno.test("ages read as kubectl prints them", () => {
  assert.equal(age(NOW - 42_000, NOW), "42s");
  assert.equal(age(NOW - 5 * 60_000, NOW), "5m");
  assert.equal(age(NOW - 3 * 3_600_000, NOW), "3h");
  assert.equal(age(NOW - 4 * 86_400_000, NOW), "4d");
});

function snapshot(): DevSnapshot {
  return {
    now: NOW,
    server: "https://127.0.0.1:6443",
    logFile: "/tmp/kinglet-dev.log",
    resources: [
      {
        kind: "WebApp",
        metadata: {
          namespace: "default",
          name: "hello",
          creationTimestamp: "2026-03-01T11:58:00Z",
        },
        spec: { replicas: 2 },
        status: { phase: "Ready", readyReplicas: 2 },
      } as never,
      {
        kind: "DatabaseCluster",
        metadata: {
          namespace: "default",
          name: "orders",
          creationTimestamp: "2026-03-01T11:59:30Z",
        },
        spec: { replicas: 3 },
        status: { phase: "Scaling", readyReplicas: 1 },
      } as never,
    ],
    events: [
      {
        kind: "Event",
        metadata: { name: "e1" },
        eventTime: "2026-03-01T11:59:40Z",
        type: "Normal",
        reason: "Scaling",
        regarding: { kind: "DatabaseCluster", name: "orders" },
        note: "DatabaseCluster is Scaling",
      } as never,
      {
        kind: "Event",
        metadata: { name: "e2" },
        eventTime: "2026-03-01T11:59:50Z",
        type: "Warning",
        reason: "Degraded",
        regarding: { kind: "WebApp", name: "hello" },
        note: "WebApp is Degraded",
      } as never,
    ],
    operator: { rssBytes: 50331648, reconcilesPerSecond: 2.5, queueDepth: 4 },
  };
}

Deno.test("the view shows each resource's phase, ready/desired and age, newest events first, and the operator's figures", () => {
  const lines = renderView(snapshot(), 200);
  assert.equal(lines[1], "operator: RSS 48.0 MiB, 2.5 reconciles/s, queue depth 4");
  const table = lines.indexOf(lines.find((l) => l.startsWith("KIND"))!);
  assert.match(lines[table]!, /^KIND\s+NAME\s+PHASE\s+READY\s+AGE$/);
  assert.match(lines[table + 1]!, /^DatabaseCluster\s+default\/orders\s+Scaling\s+1\/3\s+30s$/);
  assert.match(lines[table + 2]!, /^WebApp\s+default\/hello\s+Ready\s+2\/2\s+2m$/);
  const events = lines.indexOf("Last events:");
  assert.match(
    lines[events + 2]!,
    /^10s\s+Warning\s+Degraded\s+WebApp\/hello\s+WebApp is Degraded$/,
  );
  assert.match(lines[events + 3]!, /^20s\s+Normal\s+Scaling\s+DatabaseCluster\/orders/);
  assert.equal(lines.at(-1), "operator log: /tmp/kinglet-dev.log");
});

Deno.test("the view fits the terminal's width and says when the operator does not answer", () => {
  const { operator: _, ...rest } = snapshot();
  const lines = renderView(rest, 30);
  assert.ok(lines.every((l) => l.length <= 30));
  assert.equal(lines[1], "operator: /metrics not answeri");
});

Deno.test("a redraw moves home, clears each line's tail and everything below", () => {
  assert.equal(redraw(["a", "b"]), "\x1b[Ha\x1b[K\nb\x1b[K\n\x1b[J");
});
