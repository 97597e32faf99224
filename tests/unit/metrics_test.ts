import assert from "node:assert/strict";
import { RuntimeMetrics } from "../../lib/runtime/metrics/metrics.ts";
import { readProcessStats } from "../../lib/runtime/metrics/_process_stats.ts";
import { WorkQueue } from "../../lib/runtime/queue/queue.ts";
import { Store } from "../../lib/runtime/cache/store.ts";
import { FakeClock } from "../../lib/async/clock.ts";
import { type Family, parseExposition } from "./_exposition_parser.ts";

function value(family: Family | undefined, name: string, labels: Record<string, string>) {
  const sample = family?.samples.find((s) =>
    s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v)
  );
  return sample?.value;
}

Deno.test("runtime metrics publish a work queue under controller-runtime's names", async () => {
  const clock = new FakeClock();
  const metrics = new RuntimeMetrics({ processStats: () => ({ residentBytes: 1, cpuSeconds: 1 }) });
  const queue = new WorkQueue<string>({ clock, metrics: metrics.queue("webapp") });
  queue.add("a");
  queue.add("b");
  await clock.advance(1500);
  await queue.get();
  await clock.advance(250);
  queue.done("a");
  await queue.get();
  await clock.advance(4000);
  queue.addAfter("a", 5);

  const families = parseExposition(metrics.render());
  const labels = { name: "webapp", controller: "webapp" };
  assert.equal(value(families.get("workqueue_depth"), "workqueue_depth", labels), 0);
  assert.equal(value(families.get("workqueue_adds_total"), "workqueue_adds_total", labels), 2);
  assert.equal(
    value(families.get("workqueue_retries_total"), "workqueue_retries_total", labels),
    1,
  );
  const latency = families.get("workqueue_queue_duration_seconds");
  assert.equal(value(latency, "workqueue_queue_duration_seconds_count", labels), 2);
  assert.equal(value(latency, "workqueue_queue_duration_seconds_sum", labels), 3.25);
  assert.equal(value(latency, "workqueue_queue_duration_seconds_bucket", { le: "1" }), 0);
  assert.equal(value(latency, "workqueue_queue_duration_seconds_bucket", { le: "10" }), 2);
  assert.equal(
    value(
      families.get("workqueue_work_duration_seconds"),
      "workqueue_work_duration_seconds_sum",
      labels,
    ),
    0.25,
  );
  const unfinished = families.get("workqueue_unfinished_work_seconds");
  assert.equal(value(unfinished, "workqueue_unfinished_work_seconds", labels), 4);
  const longest = families.get("workqueue_longest_running_processor_seconds");
  assert.equal(value(longest, "workqueue_longest_running_processor_seconds", labels), 4);
  queue.shutDown();
});

Deno.test("runtime metrics count reconciles by result with controller-runtime's buckets", () => {
  const metrics = new RuntimeMetrics({ processStats: () => ({ residentBytes: 1, cpuSeconds: 1 }) });
  const controller = metrics.controller("database", 4);
  controller.activeWorkers(1);
  controller.reconciled("success", 0.02);
  controller.reconciled("error", 1.1);
  controller.activeWorkers(1);
  controller.activeWorkers(-1);

  const families = parseExposition(metrics.render());
  const total = families.get("controller_runtime_reconcile_total");
  const c = { controller: "database" };
  for (
    const [result, count] of [["success", 1], ["error", 1], ["requeue", 0], ["requeue_after", 0]]
  ) {
    assert.equal(
      value(total, "controller_runtime_reconcile_total", { ...c, result: `${result}` }),
      count,
    );
  }
  assert.equal(
    value(
      families.get("controller_runtime_reconcile_errors_total"),
      "controller_runtime_reconcile_errors_total",
      c,
    ),
    1,
  );
  const time = families.get("controller_runtime_reconcile_time_seconds")!;
  const bounds = time.samples.filter((s) => s.name.endsWith("_bucket")).map((s) => s.labels.le);
  assert.equal(bounds.length, 41);
  assert.deepEqual(bounds.slice(0, 3), ["0.005", "0.01", "0.025"]);
  assert.deepEqual(bounds.slice(-3), ["50", "60", "+Inf"]);
  assert.equal(value(time, "controller_runtime_reconcile_time_seconds_bucket", { le: "0.025" }), 1);
  assert.equal(value(time, "controller_runtime_reconcile_time_seconds_bucket", { le: "1.25" }), 2);
  assert.equal(
    value(
      families.get("controller_runtime_max_concurrent_reconciles"),
      "controller_runtime_max_concurrent_reconciles",
      c,
    ),
    4,
  );
  assert.equal(
    value(
      families.get("controller_runtime_active_workers"),
      "controller_runtime_active_workers",
      c,
    ),
    1,
  );
});

Deno.test("runtime metrics count API requests and read caches and the process on scrape", () => {
  let rss = 50_000_000;
  const metrics = new RuntimeMetrics({
    processStats: () => ({ residentBytes: rss, cpuSeconds: 2.5 }),
  });
  const host = "10.0.0.1:6443";
  metrics.observeRequest({ code: "200", method: "GET", host, seconds: 0.01 });
  metrics.observeRequest({ code: "200", method: "GET", host, seconds: 0.02 });
  metrics.observeRequest({ code: "<error>", method: "PATCH", host, seconds: 30 });
  const store = new Store({ budget: { maxObjects: 1 }, fetch: () => Promise.resolve(undefined) });
  metrics.trackStore("ConfigMap", store);
  for (const name of ["a", "b"]) {
    store.apply({
      type: "applied",
      object: { metadata: { name, uid: name, resourceVersion: "1" } },
    });
  }
  store.get("a");
  store.get("b");

  rss = 60_000_000;
  const text = metrics.render();
  const families = parseExposition(text);
  const requests = families.get("rest_client_requests_total");
  assert.equal(value(requests, "rest_client_requests_total", { code: "200", method: "GET" }), 2);
  assert.equal(value(requests, "rest_client_requests_total", { code: "<error>" }), 1);
  const kind = { kind: "ConfigMap" };
  assert.equal(value(families.get("kinglet_cache_objects"), "kinglet_cache_objects", kind), 1);
  assert.equal(value(families.get("kinglet_cache_keys"), "kinglet_cache_keys", kind), 2);
  assert.equal(
    value(families.get("kinglet_cache_bytes"), "kinglet_cache_bytes", kind),
    store.stats().bytes,
  );
  assert.equal(
    value(families.get("kinglet_cache_hits_total"), "kinglet_cache_hits_total", kind),
    1,
  );
  assert.equal(
    value(families.get("kinglet_cache_misses_total"), "kinglet_cache_misses_total", kind),
    1,
  );
  assert.equal(
    value(families.get("kinglet_cache_evictions_total"), "kinglet_cache_evictions_total", kind),
    1,
  );
  assert.ok(text.includes("process_resident_memory_bytes 6e+07\n"));
  assert.ok(text.includes("process_cpu_seconds_total 2.5\n"));
});

Deno.test("runtime metrics time API requests in client-go's request duration histogram", () => {
  const metrics = new RuntimeMetrics({ processStats: () => ({ residentBytes: 1, cpuSeconds: 1 }) });
  const host = "10.0.0.1:6443";
  for (const seconds of [0.003, 0.02, 0.02, 0.3]) {
    metrics.observeRequest({ code: "200", method: "GET", host, seconds });
  }
  metrics.observeRequest({ code: "409", method: "PATCH", host, seconds: 90 });

  const duration = parseExposition(metrics.render()).get("rest_client_request_duration_seconds");
  assert.equal(duration?.type, "histogram");
  const name = "rest_client_request_duration_seconds";
  const get = { verb: "GET", host };
  assert.equal(value(duration, `${name}_count`, get), 4);
  assert.ok(Math.abs(value(duration, `${name}_sum`, get)! - 0.343) < 1e-9);
  const buckets = { "0.005": 1, "0.025": 3, "0.1": 3, "0.25": 3, "0.5": 4, "60": 4, "+Inf": 4 };
  for (const [le, count] of Object.entries(buckets)) {
    assert.equal(value(duration, `${name}_bucket`, { ...get, le }), count, `le=${le}`);
  }
  const bounds = duration!.samples.filter((s) =>
    s.name === `${name}_bucket` && s.labels.verb === "GET"
  )
    .map((s) => s.labels.le);
  assert.deepEqual(bounds, [
    "0.005",
    "0.025",
    "0.1",
    "0.25",
    "0.5",
    "1",
    "2",
    "4",
    "8",
    "15",
    "30",
    "60",
    "+Inf",
  ]);
  const patch = { verb: "PATCH", host };
  assert.equal(value(duration, `${name}_bucket`, { ...patch, le: "60" }), 0);
  assert.equal(value(duration, `${name}_bucket`, { ...patch, le: "+Inf" }), 1);
});

Deno.test("runtime metrics render valid exposition text with the real process collector", () => {
  const metrics = new RuntimeMetrics();
  metrics.queue("a");
  metrics.controller("a", 1);
  const families = parseExposition(metrics.render());
  assert.ok(
    value(families.get("process_resident_memory_bytes"), "process_resident_memory_bytes", {})! > 0,
  );
});

Deno.test("process stats report RSS and user plus system CPU seconds", () => {
  const stats = readProcessStats({
    rss: () => 51200 * 1024,
    cpuUsage: () => ({ user: 2_500_000, system: 1_300_000 }),
  });
  assert.deepEqual(stats, { residentBytes: 51200 * 1024, cpuSeconds: 3.8 });
  const unknown = readProcessStats({
    rss: () => 1,
    cpuUsage: () => {
      throw new Error("getrusage unsupported");
    },
  });
  assert.equal(unknown.cpuSeconds, undefined);
  const real = readProcessStats();
  assert.ok(real.residentBytes > 0 && real.cpuSeconds! > 0);
});
