import assert from "node:assert/strict";
import { parseAllDocuments } from "yaml";
import { cells, resultsOf, sample } from "./_bench_results.ts";
import { parseOptions } from "../../bench/harness/options.ts";
import { planRuns } from "../../bench/harness/runner.ts";
import { SCENARIOS } from "../../bench/harness/scenarios.ts";
import { expandCommand, loadTarget } from "../../bench/harness/target.ts";
import { admissionFigures, computeFigures } from "../../bench/measure/figures.ts";
import { type AdmissionMarks, leftOutNote, type Run } from "../../bench/measure/results.ts";
import { renderReport, scenarioTable } from "../../bench/report/report.ts";
import { seriesOf } from "../../bench/report/series.ts";
import { summarize } from "../../bench/report/summary.ts";
import {
  parseWebhookFloorArgs,
  webAppAdmission,
  WEBAPPS,
  WEBHOOK_FLOOR_OPERATOR,
} from "../../bench/targets/webhook_floor.ts";
import { describeOperator } from "../../lib/deploy/operator.ts";
import { webhookConfigurations } from "../../lib/deploy/webhook_files.ts";

const MIB = 2 ** 20;

const marks: AdmissionMarks = {
  ratePerSecond: 50,
  durationMs: 2_010,
  latenciesMs: [12, 5, 7, 30, 6, 8, 9, 11, 10, 4],
  sent: 12,
  errors: 2,
  firstError: "Internal error occurred: failed calling webhook",
};

Deno.test("admission figures are the answered requests' percentiles, the errors and the RSS over the phase", () => {
  const phase = { name: "admission", startMs: 1_000, endMs: 3_000 };
  const samples = [sample(0, 90, 0), sample(1_000, 40, 1), sample(2_000, 44, 1.2)];
  const figures = admissionFigures(marks, samples, phase);
  assert.deepEqual(figures, {
    ratePerSecond: 50,
    durationMs: 2_010,
    sent: 12,
    errors: 2,
    firstError: "Internal error occurred: failed calling webhook",
    latency: { count: 10, p50: 8, p90: 12, p99: 30, max: 30 },
    rssMeanBytes: 42 * MIB,
  });
  const none = admissionFigures({ ...marks, latenciesMs: [], errors: 12 }, [], phase);
  assert.equal(none.latency, undefined);
  assert.equal(none.rssMeanBytes, undefined);
});

function admissionRun(target: string, figures: Run["figures"]): Run {
  return {
    id: `admission ${target} default`,
    target,
    group: "admission",
    scenario: "admission",
    size: 0,
    variant: { name: "default", v8Flags: [] },
    command: [],
    startedAt: "2026-01-01T00:00:00.000Z",
    durationMs: 40_000,
    phases: [],
    samples: [],
    scrapes: [],
    objects: [],
    figures,
  };
}

Deno.test("admission figures count the webhook's calls and its own latency over the phase", () => {
  const scrape = (t: number, calls: number, buckets: [number, number][]) => ({
    t,
    process: 0,
    series: [
      {
        name: "controller_runtime_webhook_requests_total",
        labels: { webhook: "/validate/kinglet.dev/webapps", code: "200" },
        value: calls,
      },
      ...buckets.map(([le, value]) => ({
        name: "controller_runtime_webhook_latency_seconds_bucket",
        labels: { webhook: "/validate/kinglet.dev/webapps", le: String(le) },
        value,
      })),
    ],
  });
  const before = scrape(0, 3, [[0.001, 3], [0.01, 3], [Infinity, 3]]);
  const after = scrape(10_000, 103, [[0.001, 53], [0.01, 103], [Infinity, 103]]);
  const control = { latenciesMs: [1, 2], sent: 2, errors: 0 };
  const quiet = scrape(-1, 3, []);
  const figures = admissionFigures({ ...marks, control }, [], undefined, { before, after }, {
    before: quiet,
    after: before,
  });
  assert.equal(figures.served, 100);
  assert.deepEqual(figures.control, {
    sent: 2,
    errors: 0,
    served: 0,
    latency: { count: 2, p50: 1, p90: 2, p99: 2, max: 2 },
  });
  assert.equal(figures.serverP50Seconds, 0.001);
  assert.ok(Math.abs(figures.serverP99Seconds! - 0.00982) < 1e-12);
  const none = admissionFigures(marks, [], undefined, {
    before: { t: 0, process: 0, series: [] },
    after: { t: 1, process: 0, series: [] },
  });
  assert.equal(none.served, undefined);
  assert.equal(none.serverP99Seconds, undefined);
});

Deno.test("an admission run's CPU is the operator's over the admission phase alone", () => {
  const run = admissionRun("webhook-floor", {});
  run.phases = [
    { name: "startup", startMs: 0, endMs: 500 },
    { name: "baseline", startMs: 500, endMs: 5_500 },
    { name: "warm-up", startMs: 5_500, endMs: 6_000 },
    { name: "admission", startMs: 6_000, endMs: 26_000 },
  ];
  run.samples = [
    sample(500, 50, 0.4),
    sample(5_500, 52, 0.5),
    sample(6_000, 52, 0.6),
    sample(16_000, 56, 1.6),
    sample(26_000, 54, 2.6),
  ];
  const { figures: _, ...record } = run;
  const figures = computeFigures(record, SCENARIOS.admission.window, marks);
  assert.ok(Math.abs(figures.cpuSeconds! - 2) < 1e-9);
  assert.equal(figures.rssIdleBytes, 51 * MIB);
  assert.equal(figures.admission?.rssMeanBytes, 54 * MIB);
  assert.equal(figures.admission?.latency?.p99, 30);
  assert.equal(figures.restart, undefined);
});

Deno.test("the admission table shows latency, errors, CPU and RSS, and the summary keeps them", () => {
  const control = { latenciesMs: [4, 3, 6, 5], sent: 4, errors: 0 };
  const figures = admissionFigures({ ...marks, control }, [sample(0, 48, 0)], {
    name: "admission",
    startMs: 0,
    endMs: 1,
  });
  const run = admissionRun("webhook-floor", {
    admission: figures,
    cpuSeconds: 1.25,
    rssIdleBytes: 47 * MIB,
    rssPeakBytes: 50 * MIB,
  });
  const results = resultsOf([run], [
    { name: "webhook-floor", file: "bench/targets/webhook-floor.json", replicas: 0 },
  ]);
  const table = scenarioTable(summarize(results).runs, seriesOf(results));
  assert.deepEqual(cells(table), [
    [
      "variant",
      "admission p50 (ms)",
      "admission p99 (ms)",
      "no webhook p50 (ms)",
      "no webhook p99 (ms)",
      "admission errors",
      "admissions sent",
      "webhook calls",
      "webhook p50 (ms)",
      "webhook p99 (ms)",
      "CPU (s)",
      "RSS admitting (MiB)",
      "RSS idle (MiB)",
      "RSS peak (MiB)",
    ],
    ["---", ...Array(13).fill("---:")],
    [
      "default",
      "8.0",
      "30.0",
      "4.0",
      "6.0",
      "2",
      "12",
      "–",
      "–",
      "–",
      "1.25",
      "48.0",
      "47.0",
      "50.0",
    ],
  ]);
  assert.deepEqual(summarize(results).runs[0]!.figures.admission, figures);
});

Deno.test("a target without a webhook is left out of admission, and the report and the harness say why", () => {
  const note = leftOutNote("manager-floor", ["idle"], "admission");
  assert.equal(
    note,
    "manager-floor is left out of admission (it runs idle): admission needs a webhook, " +
      "`{webhookPort}` in the command and `webhookConfigurations` in the target file",
  );
  assert.equal(leftOutNote("webhook-floor", ["idle", "admission"], "admission"), undefined);
  const results = resultsOf([admissionRun("webhook-floor", {})], [
    { name: "webhook-floor", file: "w.json", replicas: 0, scenarios: ["idle", "admission"] },
    { name: "manager-floor", file: "m.json", replicas: 0, scenarios: ["idle"] },
  ]);
  assert.ok(renderReport(results, []).includes(`- ${note}.`));
});

Deno.test("the webhook floor's two targets are one program, the second given a webhook", async () => {
  const [plain, serving, kinglet] = await Promise.all([
    loadTarget("manager-floor"),
    loadTarget("webhook-floor"),
    loadTarget("kinglet"),
  ]);
  assert.deepEqual(plain.scenarios, ["idle"]);
  assert.deepEqual(serving.scenarios, ["idle", "admission"]);
  assert.equal(plain.webhookConfigurations, undefined);
  assert.deepEqual(
    serving.webhookConfigurations?.map((f) => f.replace(serving.cwd, "")),
    ["/bench/targets/webhook-floor.yaml"],
  );
  assert.deepEqual(serving.command.slice(0, plain.command.length), plain.command);
  assert.deepEqual(serving.command.slice(plain.command.length), [
    "--webhook-bind-address=127.0.0.1:{webhookPort}",
    "--namespace={namespace}",
  ]);
  assert.deepEqual(plain.env, kinglet.env);
  assert.deepEqual(plain.defaultV8Flags, kinglet.defaultV8Flags);
  const values = { kubeconfig: "/k", metricsPort: 1, probePort: 2, namespace: "bench" };
  assert.ok(
    expandCommand(serving, { ...values, webhookPort: 3 }).includes(
      "--webhook-bind-address=127.0.0.1:3",
    ),
  );
  const plans = planRuns(parseOptions(["--scenarios", "idle,admission"]), [plain, serving]);
  assert.deepEqual(plans.map((p) => p.group), ["idle", "idle", "admission"]);
  assert.equal(plans[2]!.target.name, "webhook-floor");
});

Deno.test("a target is refused a webhook port without configurations, and admission without a webhook", async () => {
  const dir = await Deno.makeTempDir();
  const kinglet = JSON.parse(
    await Deno.readTextFile(new URL("../../bench/targets/kinglet.json", import.meta.url)),
  );
  const write = async (spec: Record<string, unknown>) => {
    await Deno.writeTextFile(`${dir}/t.json`, JSON.stringify({ ...kinglet, ...spec, cwd: "." }));
    await Deno.writeTextFile(`${dir}/crds.yaml`, "");
  };
  await write({ command: [...kinglet.command, "--webhook=127.0.0.1:{webhookPort}"] });
  await assert.rejects(
    () => loadTarget(`${dir}/t.json`),
    /needs both \{webhookPort\} in 'command' and 'webhookConfigurations'/,
  );
  await write({ scenarios: ["idle", "admission"] });
  await assert.rejects(
    () => loadTarget(`${dir}/t.json`),
    /'scenarios' names "admission", which needs a webhook/,
  );
  await Deno.remove(dir, { recursive: true });
});

Deno.test("webhook-floor.yaml is the configuration deploy writes for the webhook floor in node mode", async () => {
  const text = await Deno.readTextFile(
    new URL("../../bench/targets/webhook-floor.yaml", import.meta.url),
  );
  const applied = parseAllDocuments(text.replaceAll("{webhookPort}", "9443")).map((d) => d.toJS());
  const operator = describeOperator({
    name: WEBHOOK_FLOOR_OPERATOR,
    envPrefix: "WEBHOOK_FLOOR_",
    image: "example.com/webhook-floor:0.0.0",
    controllers: [{ name: WEBHOOK_FLOOR_OPERATOR, resource: WEBAPPS }],
    webhooks: { admission: [webAppAdmission], port: 9443 },
  });
  assert.deepEqual(applied, webhookConfigurations(operator, "url"));
});

Deno.test("the webhook floor serves a webhook only when given its address and a namespace", () => {
  const base = [
    "--kubeconfig=/k",
    "--metrics-bind-address=127.0.0.1:1",
    "--health-probe-bind-address=127.0.0.1:2",
  ];
  assert.equal(parseWebhookFloorArgs(base).webhook, undefined);
  assert.deepEqual(
    parseWebhookFloorArgs([...base, "--webhook-bind-address=127.0.0.1:3", "--namespace=bench"])
      .webhook,
    { address: "127.0.0.1:3", namespace: "bench" },
  );
  assert.throws(
    () => parseWebhookFloorArgs([...base, "--webhook-bind-address=127.0.0.1:3"]),
    /--namespace is required/,
  );
  assert.throws(() => parseWebhookFloorArgs([...base, "--rate=3"]), /unknown flag --rate/);
});

Deno.test("the webhook floor admits a WebApp with a port and denies one without", async () => {
  const validate = webAppAdmission.validate!;
  const request = (port: unknown) => ({
    operation: "CREATE" as const,
    object: { apiVersion: "kinglet.dev/v1alpha1", kind: "WebApp", spec: { port } },
  });
  const context = {} as Parameters<typeof validate>[1];
  assert.equal((await validate(request(8080) as never, context)).allowed, true);
  assert.equal((await validate(request(0) as never, context)).allowed, false);
});

Deno.test("the admission phase lasts --admission, 30 s unless given, 5 s quick", () => {
  assert.equal(parseOptions([]).admissionMs, 30_000);
  assert.equal(parseOptions(["--quick"]).admissionMs, 5_000);
  assert.equal(parseOptions(["--admission", "10s"]).admissionMs, 10_000);
});
