import assert from "node:assert/strict";
import { exponentialBuckets, formatFloat, Registry } from "../../lib/runtime/metrics/prometheus.ts";
import { parseExposition } from "./_exposition_parser.ts";

Deno.test("registry renders counters, gauges and histograms in valid exposition format", () => {
  const registry = new Registry();
  const requests = registry.counter("requests_total", "Requests served.", ["code", "method"]);
  const temperature = registry.gauge("temperature_celsius", "Current temperature.");
  const latency = registry.histogram("latency_seconds", "Latency.", [0.1, 1, 10], ["route"]);
  requests.inc({ code: "200", method: "GET" });
  requests.inc({ code: "200", method: "GET" }, 2);
  requests.inc({ code: "500", method: "POST" });
  temperature.set({}, 21.5);
  temperature.dec({}, 0.5);
  for (const v of [0.05, 0.1, 0.5, 5, 50]) latency.observe({ route: "/a" }, v);

  const families = parseExposition(registry.render());
  assert.deepEqual([...families.keys()], [
    "latency_seconds",
    "requests_total",
    "temperature_celsius",
  ]);
  const counter = families.get("requests_total")!;
  assert.equal(counter.type, "counter");
  assert.equal(counter.help, "Requests served.");
  assert.deepEqual(counter.samples.map((s) => [s.labels, s.value]), [
    [{ code: "200", method: "GET" }, 3],
    [{ code: "500", method: "POST" }, 1],
  ]);
  assert.equal(families.get("temperature_celsius")!.samples[0]!.value, 21);
  const histogram = families.get("latency_seconds")!;
  assert.equal(histogram.type, "histogram");
  const byName = (suffix: string) =>
    histogram.samples.filter((s) => s.name === `latency_seconds_${suffix}`);
  assert.deepEqual(byName("bucket").map((s) => [s.labels.le, s.value]), [
    ["0.1", 2],
    ["1", 3],
    ["10", 4],
    ["+Inf", 5],
  ]);
  assert.equal(byName("sum")[0]!.value, 55.65);
  assert.equal(byName("count")[0]!.value, 5);
});

Deno.test("registry escapes label values and help text", () => {
  const registry = new Registry();
  const weird = 'back\\slash "quoted"\nnext line';
  registry.gauge("odd", "Help with \\ and\nnewline.", ["path"]).set({ path: weird }, 1);
  const text = registry.render();
  assert.ok(text.includes('odd{path="back\\\\slash \\"quoted\\"\\nnext line"} 1\n'));
  const family = parseExposition(text).get("odd")!;
  assert.equal(family.help, "Help with \\ and\nnewline.");
  assert.equal(family.samples[0]!.labels.path, weird);
});

Deno.test("registry runs collectors on each render", () => {
  const registry = new Registry();
  const gauge = registry.gauge("reads", "Reads.");
  let reads = 0;
  const stop = registry.onCollect(() => gauge.set({}, ++reads));
  registry.onCollect(() => {
    throw new Error("a failing collector does not break the scrape");
  });
  registry.render();
  assert.ok(registry.render().includes("reads 2\n"));
  stop();
  assert.ok(registry.render().includes("reads 2\n"));
});

Deno.test("each render shows the values of that moment, and series added since", () => {
  const registry = new Registry();
  const requests = registry.counter("requests_total", "Requests.", ["code"]);
  const latency = registry.histogram("latency_seconds", "Latency.", [0.1, 1], ["code"]);
  requests.inc({ code: "200" });
  latency.observe({ code: "200" }, 0.05);
  const first = registry.render();
  assert.ok(first.includes('requests_total{code="200"} 1\n'));
  assert.ok(first.includes('latency_seconds_bucket{code="200",le="0.1"} 1\n'));
  requests.inc({ code: "200" }, 2);
  requests.inc({ code: "500" });
  latency.observe({ code: "200" }, 0.5);
  latency.observe({ code: "200" }, 7);
  const families = parseExposition(registry.render());
  const value = (family: string, name: string, labels: Record<string, string>) =>
    families.get(family)!.samples.find((s) =>
      s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v)
    )?.value;
  assert.equal(value("requests_total", "requests_total", { code: "200" }), 3);
  assert.equal(value("requests_total", "requests_total", { code: "500" }), 1);
  const bucket = (le: string) =>
    value("latency_seconds", "latency_seconds_bucket", { code: "200", le });
  assert.deepEqual([bucket("0.1"), bucket("1"), bucket("+Inf")], [1, 2, 3]);
  assert.equal(value("latency_seconds", "latency_seconds_sum", { code: "200" }), 7.55);
  assert.equal(value("latency_seconds", "latency_seconds_count", { code: "200" }), 3);
});

Deno.test("an empty registry renders nothing and a metric without samples renders its header", () => {
  const registry = new Registry();
  assert.equal(registry.render(), "");
  registry.counter("unused_total", "Never incremented.", ["x"]);
  assert.equal(
    registry.render(),
    "# HELP unused_total Never incremented.\n# TYPE unused_total counter\n",
  );
});

Deno.test("numbers are written as Prometheus' Go client writes them", () => {
  const cases: [number, string][] = [
    [0, "0"],
    [1, "1"],
    [-0.5, "-0.5"],
    [0.0001, "0.0001"],
    [0.00001, "1e-05"],
    [123456, "123456"],
    [999_999.999_999_999_9, "999999.9999999999"],
    [-0.0001, "-0.0001"],
    [-1_000_000, "-1e+06"],
    [1_000_000, "1e+06"],
    [1_234_567, "1.234567e+06"],
    [56_000_000, "5.6e+07"],
    [1e21, "1e+21"],
    [1e-100, "1e-100"],
    [Infinity, "+Inf"],
    [-Infinity, "-Inf"],
    [NaN, "NaN"],
  ];
  for (const [value, text] of cases) assert.equal(formatFloat(value), text, String(value));
  assert.deepEqual(exponentialBuckets(10e-9, 10, 12).map(formatFloat), [
    "1e-08",
    "1e-07",
    "1e-06",
    "9.999999999999999e-06",
    "9.999999999999999e-05",
    "0.001",
    "0.01",
    "0.1",
    "1",
    "10",
    "100",
    "1000",
  ]);
});

Deno.test("registry rejects invalid names, duplicate metrics and wrong labels", () => {
  const registry = new Registry();
  assert.throws(() => registry.counter("1bad", "x"), TypeError);
  assert.throws(() => registry.counter("ok_total", "x", ["__reserved"]), TypeError);
  assert.throws(() => registry.histogram("h", "x", [1], ["le"]), TypeError);
  assert.throws(() => registry.histogram("h2", "x", [2, 1]), /strictly increasing/);
  assert.throws(() => registry.histogram("h3", "x", []), TypeError);
  const counter = registry.counter("c_total", "x", ["a"]);
  assert.throws(() => registry.gauge("c_total", "x"), /already taken/);
  assert.throws(
    () => counter.inc({ b: "1" } as unknown as { a: string }),
    /expected labels \[a\], got \[b\]/,
  );
  assert.throws(() => counter.inc({ a: "1" }, -1), RangeError);
});

Deno.test("the exposition parser used by these tests rejects malformed output", () => {
  const bad = [
    "no_newline 1",
    "bad name 1\n",
    'm{a="1"}  1\n',
    'm{a="1",a="2"} 1\n',
    'm{a="\\t"} 1\n',
    "m 1.2.3\n",
    "# TYPE m counter\nm 1\n# TYPE n gauge\nn 1\nm 2\n",
    '# TYPE h histogram\nh_bucket{le="1"} 2\nh_bucket{le="+Inf"} 1\nh_sum 1\nh_count 1\n',
    '# TYPE h histogram\nh_bucket{le="1"} 1\nh_sum 1\nh_count 1\n',
  ];
  for (const text of bad) assert.throws(() => parseExposition(text), Error, JSON.stringify(text));
});
