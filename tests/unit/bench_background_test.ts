import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { gzipSync } from "node:zlib";
import { UsageError } from "../../lib/cli/flags.ts";
import {
  CONFIG_MAPS,
  DEPLOYMENTS,
  NAMESPACES,
  SECRETS,
  SERVICES,
} from "../../lib/kube/resources.ts";
import type { KubeObject } from "../../lib/kube/types.ts";
import { MemoryCluster } from "../../lib/testing/mod.ts";
import {
  backgroundObjects,
  BACKGROUNDS,
  type BackgroundSpec,
  describeBackground,
  fillBackground,
} from "../../bench/harness/background.ts";
import { parseOptions } from "../../bench/harness/options.ts";
import { renderReport } from "../../bench/report/report.ts";
import {
  parseResults,
  type Results,
  RESULTS_FORMAT,
  type Run,
} from "../../bench/measure/results.ts";

const KIB = 1024;
const realistic = BACKGROUNDS.realistic!;

/** The realistic preset scaled down, created fast, for the tests against the in-memory server. */
const small: BackgroundSpec = {
  ...realistic,
  helmReleases: 2,
  helmRevisions: 3,
  configMaps: 7,
  deployments: 3,
  ratePerSecond: 10_000,
};

interface Stored extends KubeObject {
  type?: string;
  data?: Record<string, string>;
}

function objectsOf(spec: BackgroundSpec, kind: string): Stored[] {
  return [...backgroundObjects(spec)].map((o) => o.object as Stored).filter((o) => o.kind === kind);
}

Deno.test("bench options default to an empty cluster and take the realistic background", () => {
  assert.equal(parseOptions([]).background, "none");
  assert.equal(parseOptions(["--background", "realistic"]).background, "realistic");
  assert.equal(
    parseOptions(["--background", "none", "--kubeconfig", "/tmp/k"]).background,
    "none",
  );
});

Deno.test("bench options refuse an unknown background, naming the known ones", () => {
  assert.throws(
    () => parseOptions(["--background", "huge"]),
    (e: unknown) =>
      e instanceof UsageError &&
      e.message === "--background: unknown background huge; known: none, realistic",
  );
});

Deno.test("bench options refuse a background on a cluster given by --kubeconfig", () => {
  assert.throws(
    () => parseOptions(["--background", "realistic", "--kubeconfig", "/tmp/k"]),
    (e: unknown) =>
      e instanceof UsageError && /--background realistic fills a fresh local/.test(e.message),
  );
});

Deno.test("the realistic background holds its documented counts, in creation order", () => {
  const kinds = [...backgroundObjects(realistic)].map((o) => o.object.kind);
  const order = kinds.filter((kind, i) => kinds[i - 1] !== kind);
  assert.deepEqual(order, ["Namespace", "Secret", "ConfigMap", "Service", "Deployment"]);
  assert.deepEqual(
    describeBackground(realistic).kinds.map((k) => [k.kind, k.count]),
    [["Namespace", 4], ["Secret", 200], ["ConfigMap", 300], ["Service", 60], ["Deployment", 60]],
  );
  const names = [...backgroundObjects(realistic)].map(({ resource, object }) =>
    `${resource.plural} ${object.metadata?.namespace}/${object.metadata?.name}`
  );
  assert.equal(new Set(names).size, names.length, "every object has a name of its own");
});

Deno.test("Helm release Secrets hold 20 to 200 KiB each, labelled as Helm labels them", () => {
  const secrets = objectsOf(realistic, "Secret");
  const sizes = secrets.map((s) => Buffer.from(s.data!.release!, "base64").length);
  assert.ok(sizes.every((n) => n >= 20 * KIB && n <= 200 * KIB), `sizes ${Math.min(...sizes)}..`);
  const total = sizes.reduce((a, b) => a + b, 0);
  assert.ok(total > 15 * 2 ** 20 && total < 30 * 2 ** 20, `total ${total}`);
  const first = secrets[0]!;
  assert.equal(first.type, "helm.sh/release.v1");
  assert.equal(first.metadata?.name, "sh.helm.release.v1.traefik.v1");
  assert.deepEqual(
    secrets.filter((s) => s.metadata?.labels?.name === "traefik").map((s) =>
      `${s.metadata?.labels?.version} ${s.metadata?.labels?.status}`
    ),
    [
      ...Array.from({ length: 9 }, (_, i) => `${i + 1} superseded`),
      "10 deployed",
    ],
  );
  assert.ok(secrets.every((s) => s.metadata?.labels?.owner === "helm"));
});

Deno.test("a release's stored text is base64 of bytes that gzip cannot shrink", () => {
  const stored = Buffer.from(objectsOf(realistic, "Secret")[0]!.data!.release!, "base64");
  const inner = Buffer.from(stored.toString(), "base64");
  assert.equal(inner.length, (stored.length / 4) * 3);
  assert.ok(gzipSync(inner).length > inner.length * 0.99);
});

Deno.test("ConfigMaps hold 1 to 8 KiB of text beside the Deployment they are named after", () => {
  const maps = objectsOf(realistic, "ConfigMap");
  const deployments = new Set(
    objectsOf(realistic, "Deployment").map((d) => `${d.metadata?.namespace}/${d.metadata?.name}`),
  );
  for (const map of maps) {
    const name = map.metadata!.name!;
    const values = Object.values(map.data ?? {});
    assert.equal(values.length, 1);
    assert.ok(values[0]!.length >= KIB && values[0]!.length <= 8 * KIB, name);
    const app = name.replace(/-[a-z]+$/, "");
    assert.ok(deployments.has(`${map.metadata?.namespace}/${app}`), name);
  }
});

Deno.test("the background carries neither kinglet's labels nor the bench's", () => {
  for (const { object } of backgroundObjects(realistic)) {
    const labels = object.metadata?.labels ?? {};
    assert.notEqual(labels["app.kubernetes.io/managed-by"], "kinglet");
    assert.equal(labels["app.kubernetes.io/part-of"], undefined);
  }
  const deployments = objectsOf(realistic, "Deployment") as (Stored & {
    spec: { replicas: number };
  })[];
  assert.ok(deployments.every((d) => d.spec.replicas === 1));
});

Deno.test("one seed gives the same objects, another seed other contents under the same names", () => {
  const once = [...backgroundObjects(small)];
  assert.deepEqual([...backgroundObjects(small)], once);
  const reseeded = [...backgroundObjects({ ...small, seed: small.seed + 1 })];
  assert.deepEqual(
    reseeded.map((o) => o.object.metadata?.name),
    once.map((o) => o.object.metadata?.name),
  );
  const release = (objects: typeof once) => (objects[small.namespaces.length]!.object as Stored);
  assert.notEqual(release(reseeded).data!.release, release(once).data!.release);
});

Deno.test("the description sums each kind's JSON bytes and names its extremes", () => {
  const described = describeBackground(small);
  const secrets = objectsOf(small, "Secret").map((s) => JSON.stringify(s).length);
  const secret = described.kinds.find((k) => k.kind === "Secret")!;
  assert.equal(secret.count, 6);
  assert.equal(secret.bytes, secrets.reduce((a, b) => a + b, 0));
  assert.equal(secret.minBytes, Math.min(...secrets));
  assert.equal(secret.maxBytes, Math.max(...secrets));
  assert.deepEqual(
    [described.name, described.seed, described.replicas],
    ["realistic", 24, 1],
  );
});

Deno.test("filling creates every object, then waits for the Deployments to be available", async () => {
  const cluster = new MemoryCluster();
  let released = false;
  const kwok = (async () => {
    // Like the controllers and kwok, make the Deployments available once they all exist.
    while (cluster.objects(DEPLOYMENTS).length < small.deployments) {
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
    released = true;
    for (const deployment of cluster.objects(DEPLOYMENTS)) {
      cluster.put(DEPLOYMENTS, {
        ...deployment,
        status: { observedGeneration: 1, replicas: 1, availableReplicas: 1 },
      });
    }
  })();
  const times = await fillBackground(cluster, small, { timeoutMs: 30_000 });
  await kwok;
  assert.ok(released, "the fill returned only after the Deployments were available");
  assert.ok(times.availableMs >= 40, `available after ${times.availableMs} ms`);
  for (const name of small.namespaces) assert.ok(cluster.object(NAMESPACES, name), name);
  assert.equal(cluster.objects(SECRETS).length, 6);
  assert.equal(cluster.objects(CONFIG_MAPS).length, 7);
  assert.equal(cluster.objects(SERVICES).length, 3);
  // Filling again finds everything there and counts it as created.
  await fillBackground(cluster, small, { timeoutMs: 30_000 });
  assert.equal(cluster.objects(SECRETS).length, 6);
});

Deno.test("filling creates nothing in a namespace before the namespace exists", async () => {
  const cluster = new MemoryCluster();
  const namespaces = new Set<string>();
  const early: string[] = [];
  const slow: Parameters<typeof fillBackground>[0] = {
    list: (resource, options) => cluster.list(resource, options),
    async create(resource, object, options) {
      if (resource === NAMESPACES) {
        // A slow answer: the next create is due before it arrives.
        await new Promise((resolve) => setTimeout(resolve, 20));
        const created = await cluster.create(resource, object, options);
        namespaces.add(object.metadata!.name!);
        return created;
      }
      if (!namespaces.has(object.metadata!.namespace!)) early.push(object.metadata!.name!);
      return await cluster.create(resource, object, options);
    },
  };
  for (
    const deployment of [...backgroundObjects(small)].filter((o) => o.resource === DEPLOYMENTS)
  ) {
    cluster.put(DEPLOYMENTS, {
      ...deployment.object,
      status: { observedGeneration: 1, replicas: 1, availableReplicas: 1 },
    });
  }
  await fillBackground(slow, small, { timeoutMs: 1_000 });
  assert.deepEqual(early, []);
  assert.equal(namespaces.size, small.namespaces.length);
});

Deno.test("filling fails when the Deployments never become available, saying how many are", async () => {
  const cluster = new MemoryCluster();
  await assert.rejects(
    () => fillBackground(cluster, small, { timeoutMs: 100 }),
    /not available within 100 ms: 0 of 3 had their 1 replica\(s\)/,
  );
});

Deno.test("the report states the background, its sizes and how long it took to fill", () => {
  const described = describeBackground(realistic);
  const results = resultsWith({
    options: { background: "realistic" },
    background: described,
    runs: [run(10_000, 2_000), run(12_000, 3_000), run(30_000, 1_000)],
  });
  const report = renderReport(parseResults(JSON.stringify(results)), []);
  const line = report.split("\n").find((l) => l.startsWith("- **Background**"))!;
  assert.match(line, /`realistic`, created before each operator started/);
  assert.match(line, /seed 24\), in 4 namespaces \(platform, monitoring, team-a, team-b\)/);
  assert.match(line, /200 Secrets \(28\.\d MiB\), 300 ConfigMaps \(1\.\d MiB\)/);
  assert.match(line, /60 Deployments \(\d+ KiB, 1 replica\(s\) each\)/);
  assert.match(line, /created and available in 15\.0 s \(median of 3 run\(s\)\)\./);
  assert.ok(!line.includes("Namespaces ("));
});

Deno.test("the report says a run's cluster was empty, and nothing for results from before", () => {
  const empty = renderReport(resultsWith({ options: { background: "none" }, runs: [] }), []);
  assert.match(empty, /- \*\*Background\*\*: none: the cluster held nothing but the run's own/);
  const older = renderReport(resultsWith({ options: {}, runs: [] }), []);
  assert.ok(!older.includes("**Background**"));
});

function run(createMs: number, availableMs: number): Run {
  return {
    id: "idle default",
    group: "idle",
    scenario: "idle",
    size: 0,
    variant: { name: "default", v8Flags: [] },
    command: [],
    startedAt: "2026-01-01T00:00:00Z",
    durationMs: 1,
    phases: [],
    samples: [],
    scrapes: [],
    objects: [],
    background: { createMs, availableMs },
    figures: {},
  };
}

function resultsWith(parts: Pick<Results, "options" | "runs"> & Partial<Results>): Results {
  const target = { name: "kinglet", file: "bench/targets/kinglet.json", replicas: 0 };
  return {
    format: RESULTS_FORMAT,
    startedAt: "2026-01-01T00:00:00Z",
    finishedAt: "2026-01-01T00:01:00Z",
    machine: {
      cores: 2,
      memoryBytes: 2 ** 34,
      cpuModel: "cpu",
      os: "linux",
      kernel: "6",
      loadAverage: [1, 1, 1],
    },
    versions: {
      deno: "2.9.6",
      v8: "14",
      typescript: "5",
      kubernetes: "v1.36.3",
      kinglet: "0.1.0",
      commit: "abc",
      target: "kinglet",
    },
    target,
    ...parts,
  };
}
