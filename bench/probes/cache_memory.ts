/**
 * Where the WebApp controller's steady memory goes with N converged WebApps:
 * the heap each cache and per-key structure adds, against the stores' own
 * estimate (`kinglet_cache_bytes`), without a cluster.
 *
 *   deno run -A --v8-flags=--expose-gc,--max-semi-space-size=1 bench/probes/cache_memory.ts [--objects 5000] [--snapshot]
 *     [--evict] [--events-tracked 4096]
 *
 * The real controller is built (`webAppController` in a `Controller` over a
 * fake client that is never called), and its stores are fed ADDED events
 * parsed from JSON one at a time, as a watch delivers them: WebApps as the
 * API server returns them after kinglet reconciled them (managedFields,
 * status with conditions), Deployments as the API server returns them after
 * the Deployment controller rolled them out, and Services as
 * `PartialObjectMetadata`. The cases are cumulative; each runs in a fresh
 * process, which measures itself after a full GC before and after filling.
 * Before the `queue` case the controller's queue is shut down, so the store
 * subscriptions enqueue nothing; `applier` runs the real reconcile once per
 * WebApp (which fills the ChildApplier's records); `events` publishes the
 * three phase Events per WebApp over five simulated minutes through a real
 * EventRecorder. With `--snapshot`, the empty and the last case also write a
 * V8 heap snapshot, and the difference is summarized by node type and name.
 * With `--evict`, each case ends by evicting every full object (the stores
 * are budgeted, as under a memory limit), so what remains is what every key
 * costs; `--events-tracked` sets the Event recorder's `maxTracked` (a memory
 * limit of 64Mi sets 1,024).
 *
 * @module
 */
import v8 from "node:v8";
import type { V1Deployment } from "../../lib/operators/models.ts";
import { DEPLOYMENTS } from "../../lib/kube/resources.ts";
import type { KubeObject, Resource } from "../../lib/kube/types.ts";
import { renderWebApp } from "../../lib/operators/webapp/render.ts";
import { webAppController } from "../../lib/operators/webapp/reconcile.ts";
import { WEB_APPS, type WebApp } from "../../lib/operators/webapp/kind.ts";
import { workloadStatus } from "../../lib/operators/workload_status.ts";
import type { CacheClient } from "../../lib/runtime/cache/caches.ts";
import { Caches } from "../../lib/runtime/cache/caches.ts";
import { systemClock } from "../../lib/async/clock.ts";
import { Controller, type ControllerClient } from "../../lib/runtime/controller/controller.ts";
import type { ReconcileContext } from "../../lib/runtime/controller/spec.ts";
import { EventRecorder } from "../../lib/runtime/events/events.ts";
import { sameJson } from "../../lib/runtime/objects/same_json.ts";
import { Semaphore } from "../../lib/async/semaphore.ts";
import type { Reflector } from "../../lib/runtime/cache/reflector.ts";
import type { StoreView } from "../../lib/runtime/cache/store.ts";
import { summarizeSnapshots } from "./_heap_snapshot.ts";
import { gc } from "./store_memory.ts";

const CASES = [
  "empty",
  "webapps",
  "deployments",
  "services",
  "queue",
  "applier",
  "events",
  "churn",
] as const;
type Case = typeof CASES[number];
const NAMESPACE = "kinglet-bench-3f9c2a1d";
const T0 = Date.parse("2026-11-03T10:00:00Z");

/** What one case measured, in bytes. */
interface Measurement {
  case: Case;
  heapDelta: number;
  heapBeforeGc: number;
  rss: number;
  /** `stats().bytes` per store: webapps, deployments, services. */
  estimates: number[];
  jsonBytes: number[];
  queueLen: number;
  applied: number;
  /** `heapUsed` when the case started, after a full GC: what the deltas are relative to. */
  baseHeap: number;
  /** `heapUsed` and `heapTotal` sampled during the churn, without forcing a GC. */
  churn?: { meanUsed: number; maxUsed: number; maxTotal: number; samples: number };
}

/** Rounds of churn: a status change of every Deployment and WebApp, each followed by a reconcile. */
const CHURN_ROUNDS = 2;

const encoder = new TextEncoder();
function print(line = ""): void {
  Deno.stdout.writeSync(encoder.encode(`${line}\n`));
}

const time = (seconds: number) =>
  new Date(T0 + Math.floor(seconds) * 1000).toISOString().replace(".000", "");
const fields = (names: string[]) => Object.fromEntries(names.map((n) => [`f:${n}`, {}]));
const uid = (kind: number, i: number) =>
  `${kind}${i.toString(16).padStart(7, "0")}-9c1e-4b7a-8d2f-${
    (i * 7919).toString(16).padStart(12, "0")
  }`;

/** The three objects of WebApp `i` as the API server serves them, as JSON. */
export function objectsJson(i: number): [webApp: string, deployment: string, service: string] {
  const name = `app-${String(i + 1).padStart(5, "0")}`;
  const created = time(i * 0.06);
  const app: WebApp = {
    apiVersion: "kinglet.dev/v1alpha1",
    kind: "WebApp",
    metadata: {
      name,
      namespace: NAMESPACE,
      uid: uid(1, i),
      resourceVersion: String(300_000 + 5 * i),
      generation: 1,
      creationTimestamp: created,
      labels: { "app.kubernetes.io/part-of": "kinglet-bench" },
    },
    spec: { image: "registry.k8s.io/pause:3.10", replicas: 1, port: 8080 },
  };
  const { deployment, service } = renderWebApp(app);
  const container = deployment.spec!.template.spec!.containers[0]!;
  const rolledOut = time(i * 0.06 + 9);
  const replicaSet = `${name}-${(i * 2654435761 % 2 ** 32).toString(16).padStart(10, "7")}`;
  const kcmStatus = fields(["availableReplicas", "observedGeneration", "readyReplicas"]);
  const served = {
    ...deployment,
    metadata: {
      ...deployment.metadata,
      uid: uid(2, i),
      resourceVersion: String(300_001 + 5 * i),
      generation: 1,
      creationTimestamp: time(i * 0.06 + 1),
      annotations: { "deployment.kubernetes.io/revision": "1" },
      managedFields: [
        managed("kinglet", "Apply", "apps/v1", created, {
          "f:metadata": {
            "f:labels": fields(Object.keys(deployment.metadata!.labels!)),
            "f:ownerReferences": { [`k:{"uid":"${uid(1, i)}"}`]: {} },
          },
          "f:spec": {
            "f:replicas": {},
            "f:selector": {},
            "f:template": {
              "f:metadata": { "f:labels": fields(Object.keys(deployment.metadata!.labels!)) },
              "f:spec": {
                "f:containers": {
                  [`k:{"name":"app"}`]: {
                    ".": {},
                    "f:image": {},
                    "f:name": {},
                    "f:ports": {
                      [`k:{"containerPort":8080,"protocol":"TCP"}`]: fields([".", "containerPort"]),
                    },
                  },
                },
              },
            },
          },
        }),
        managed("kube-controller-manager", "Update", "apps/v1", rolledOut, {
          "f:metadata": { "f:annotations": fields([".", "deployment.kubernetes.io/revision"]) },
        }),
        managed("kube-controller-manager", "Update", "apps/v1", rolledOut, {
          "f:status": {
            "f:conditions": {
              ".": {},
              [`k:{"type":"Available"}`]: fields([".", "lastTransitionTime", "message", "type"]),
              [`k:{"type":"Progressing"}`]: fields([".", "lastTransitionTime", "message", "type"]),
            },
            ...kcmStatus,
          },
        }, "status"),
      ],
    },
    spec: {
      ...deployment.spec!,
      progressDeadlineSeconds: 600,
      revisionHistoryLimit: 10,
      strategy: {
        type: "RollingUpdate",
        rollingUpdate: { maxSurge: "25%", maxUnavailable: "25%" },
      },
      template: {
        metadata: deployment.spec!.template.metadata!,
        spec: {
          containers: [{
            ...container,
            imagePullPolicy: "IfNotPresent",
            resources: {},
            terminationMessagePath: "/dev/termination-log",
            terminationMessagePolicy: "File",
          }],
          dnsPolicy: "ClusterFirst",
          restartPolicy: "Always",
          schedulerName: "default-scheduler",
          securityContext: {},
          terminationGracePeriodSeconds: 30,
        },
      },
    },
    status: {
      observedGeneration: 1,
      replicas: 1,
      updatedReplicas: 1,
      readyReplicas: 1,
      availableReplicas: 1,
      conditions: [
        condition("Available", "MinimumReplicasAvailable", "Deployment has minimum availability."),
        condition(
          "Progressing",
          "NewReplicaSetAvailable",
          `ReplicaSet "${replicaSet}" has successfully progressed.`,
        ),
      ].map((c) => ({ ...c, lastUpdateTime: rolledOut, lastTransitionTime: rolledOut })),
    },
  };
  // As kinglet wrote it: Pending before the Deployment existed, then Ready once it rolled out.
  const pending = workloadStatus(app, app.spec.port, undefined, new Date(T0 + i * 60));
  const status = workloadStatus(
    { ...app, status: pending },
    app.spec.port,
    served as unknown as V1Deployment,
    new Date(T0 + i * 60 + 9000),
  );
  const conditionFields = Object.fromEntries(
    status.conditions!.map((c) => [
      `k:{"type":"${c.type}"}`,
      fields([".", "lastTransitionTime", "message", "observedGeneration", "reason", "status"]),
    ]),
  );
  const webApp = {
    ...app,
    metadata: {
      ...app.metadata,
      resourceVersion: String(300_004 + 5 * i),
      managedFields: [
        managed("kinglet", "Update", "kinglet.dev/v1alpha1", created, {
          "f:metadata": { "f:labels": fields([".", "app.kubernetes.io/part-of"]) },
          "f:spec": fields([".", "image", "port", "replicas"]),
        }),
        managed("kinglet", "Apply", "kinglet.dev/v1alpha1", rolledOut, {
          "f:status": {
            ...fields(["availableReplicas", "observedGeneration", "phase", "readyReplicas"]),
            ...fields(["replicas", "selector", "url"]),
            "f:conditions": conditionFields,
          },
        }, "status"),
      ],
    },
    status,
  };
  const serviceMeta = {
    apiVersion: "meta.k8s.io/v1",
    kind: "PartialObjectMetadata",
    metadata: {
      ...service.metadata,
      uid: uid(3, i),
      resourceVersion: String(300_002 + 5 * i),
      creationTimestamp: time(i * 0.06 + 1),
      managedFields: [
        managed("kinglet", "Apply", "v1", created, {
          "f:metadata": {
            "f:labels": fields(Object.keys(service.metadata!.labels!)),
            "f:ownerReferences": { [`k:{"uid":"${uid(1, i)}"}`]: {} },
          },
          "f:spec": {
            "f:ports": { [`k:{"port":8080,"protocol":"TCP"}`]: fields([".", "name", "port"]) },
            ...fields(["selector", "type"]),
          },
        }),
      ],
    },
  };
  // Custom resources are served from unstructured maps, whose keys Go's encoder sorts.
  return [JSON.stringify(sortKeys(webApp)), JSON.stringify(served), JSON.stringify(serviceMeta)];
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (typeof value !== "object" || value === null) return value;
  const entries = Object.entries(value).sort(([a], [b]) => (a < b ? -1 : 1));
  return Object.fromEntries(entries.map(([k, v]) => [k, sortKeys(v)]));
}

function managed(
  manager: string,
  operation: string,
  apiVersion: string,
  at: string,
  fieldsV1: Record<string, unknown>,
  subresource?: string,
) {
  return {
    manager,
    operation,
    apiVersion,
    time: at,
    fieldsType: "FieldsV1",
    fieldsV1,
    ...(subresource && { subresource }),
  };
}

function condition(type: string, reason: string, message: string) {
  return { type, status: "True", reason, message };
}

/** How a case runs: the command line's options. */
interface CaseOptions {
  objects: number;
  /** Where to write a heap snapshot at the end; "" for none. */
  snapshot: string;
  /** Whether every full object is evicted at the end (`--evict`). */
  evict: boolean;
  /** The Event recorder's `maxTracked`, when set (`--events-tracked`). */
  eventsTracked?: number;
}

/** Fills the real controller's caches up to `which`; see the module documentation. */
async function measure(which: Case, options: CaseOptions): Promise<Measurement> {
  const { objects, snapshot, evict, eventsTracked } = options;
  const upTo = CASES.indexOf(which);
  let now = T0;
  const clock = { now: () => now, sleep: systemClock.sleep.bind(systemClock) };
  const recorder = new EventRecorder({
    create: () => Promise.resolve({}),
    patch: () => Promise.resolve({}),
  }, {
    reportingInstance: "kinglet-0",
    clock,
    ...(eventsTracked && { maxTracked: eventsTracked }),
  });
  const caches = new Caches({ client: {} as CacheClient });
  // The primary's cache first, then the owned Deployments and Services, as the spec declares them.
  const stores = () => controller.reflectors.map((r) => r.store);
  // Answers an apply with the child's revision as cached, so a second reconcile skips it.
  const client = {
    apply: (resource: Resource, child: KubeObject) => {
      const store = resource === DEPLOYMENTS ? stores()[1]! : stores()[2]!;
      const entry = store.entry(`${child.metadata?.namespace}/${child.metadata?.name}`);
      return Promise.resolve({
        metadata: { generation: entry?.generation, resourceVersion: entry?.resourceVersion },
      });
    },
  } as unknown as ControllerClient & ReconcileContext["client"];
  // Budgeted (but never full) when the last step evicts every object, as a memory limit under pressure does.
  const budget = evict ? { maxBytes: Number.MAX_SAFE_INTEGER } : undefined;
  const controller = new Controller(webAppController({ now: () => new Date(now) }), {
    client,
    events: recorder,
    semaphore: new Semaphore(4),
    caches,
    ...(budget && { budget, ownedBudget: budget }),
  });
  const cache = <C extends KubeObject>(r: Resource) =>
    (r === DEPLOYMENTS ? deployments : services) as unknown as StoreView<C>;
  /** What the controller's context holds, for a reconcile called directly. */
  const context = (object: KubeObject, key: string, signal: AbortSignal): ReconcileContext => ({
    signal,
    key,
    cache,
    children: controller.childrenOf(object),
    client,
    clock: systemClock,
    events: { publish: (init) => recorder.publish(object, init) },
    async status(status) {
      if (sameJson(object.status, status)) return false;
      await client.apply(WEB_APPS, { ...object, status }, {
        fieldManager: "kinglet",
        subresource: "status",
      });
      return true;
    },
  });
  if (upTo < CASES.indexOf("queue")) controller.queue.shutDown();
  const [webApps, deployments, services] = stores();
  // The reflectors are the stores' one writer; this tool feeds them by hand.
  const [webAppsIn, deploymentsIn, servicesIn] = controller.reflectors;
  gc();
  const before = Deno.memoryUsage();
  const jsonBytes = [0, 0, 0];
  const feed: [Reflector, number][] = [[webAppsIn!, 1], [deploymentsIn!, 2], [servicesIn!, 3]];
  for (let i = 0; i < objects; i++) {
    const texts = objectsJson(i);
    for (const [store, from] of feed) {
      if (upTo < from) continue;
      jsonBytes[from - 1]! += texts[from - 1]!.length;
      store.feed({ type: "applied", object: JSON.parse(texts[from - 1]!) });
    }
  }
  let applied = 0;
  if (upTo >= CASES.indexOf("applier")) {
    const signal = new AbortController().signal;
    for (const key of webApps!.keys()) {
      const webApp = webApps!.get(key)!;
      await controller.spec.reconcile(webApp, context(webApp, key, signal));
      applied++;
    }
  }
  if (upTo >= CASES.indexOf("events")) {
    const phases = ["Pending", "Progressing", "Ready"];
    for (const key of webApps!.keys()) {
      for (const phase of phases) {
        now += 20;
        recorder.publish(webApps!.get(key)!, {
          type: "Normal",
          reason: phase,
          action: "Reconcile",
          note: `WebApp is ${phase}`,
        });
      }
      await recorder.flush();
    }
  }
  let churn: Measurement["churn"];
  if (upTo >= CASES.indexOf("churn")) {
    const signal = new AbortController().signal;
    let sum = 0;
    churn = { meanUsed: 0, maxUsed: 0, maxTotal: 0, samples: 0 };
    for (let round = 1; round <= CHURN_ROUNDS; round++) {
      for (let i = 0; i < objects; i++) {
        const [webApp, deployment] = objectsJson(i).map((text) => JSON.parse(text));
        for (
          const [store, object] of [[deploymentsIn!, deployment], [webAppsIn!, webApp]] as const
        ) {
          object.metadata.resourceVersion = String(1_000_000 * round + 5 * i);
          store.feed({ type: "applied", object });
        }
        const key = `${NAMESPACE}/${webApp.metadata.name}`;
        const cached = webApps!.get(key)!;
        await controller.spec.reconcile(cached, context(cached, key, signal));
        if (i % 50 === 0) {
          const usage = Deno.memoryUsage();
          sum += usage.heapUsed;
          churn.samples++;
          churn.maxUsed = Math.max(churn.maxUsed, usage.heapUsed);
          churn.maxTotal = Math.max(churn.maxTotal, usage.heapTotal);
        }
      }
    }
    churn.meanUsed = sum / churn.samples;
  }
  if (evict) {
    for (const reflector of controller.reflectors) {
      reflector.setBudget({ maxBytes: 1 });
    }
  }
  const heapBeforeGc = Deno.memoryUsage().heapUsed - before.heapUsed;
  gc();
  const after = Deno.memoryUsage();
  if (snapshot) v8.writeHeapSnapshot(snapshot);
  return {
    case: which,
    heapDelta: after.heapUsed - before.heapUsed,
    heapBeforeGc,
    rss: after.rss,
    estimates: [webApps!, deployments!, services!].map((s) => s.stats().bytes),
    jsonBytes: jsonBytes.map((b) => b / objects),
    queueLen: controller.queue.len,
    applied,
    baseHeap: before.heapUsed,
    ...(churn && { churn }),
  };
}

async function runCase(which: Case, options: CaseOptions): Promise<Measurement> {
  const { objects, snapshot, evict, eventsTracked } = options;
  const args = ["run", "-A", "--v8-flags=--expose-gc,--max-semi-space-size=1"];
  args.push(import.meta.filename!, "--case", which, "--objects", String(objects));
  if (evict) args.push("--evict");
  if (eventsTracked) args.push("--events-tracked", String(eventsTracked));
  if (snapshot) args.push("--snapshot-to", snapshot);
  const output = await new Deno.Command(Deno.execPath(), {
    args,
    stdout: "piped",
    stderr: "inherit",
  }).output();
  if (!output.success) throw new Error(`The ${which} case failed with code ${output.code}`);
  return JSON.parse(new TextDecoder().decode(output.stdout)) as Measurement;
}

const mib = (bytes: number) => (bytes / 2 ** 20).toFixed(1);

function table(results: Measurement[], objects: number): string[] {
  const header = ["case", "heap MiB", "Δ MiB", "Δ B/obj", "estimate MiB", "Δ/est", "pre-GC MiB"];
  header.push("RSS MiB");
  const rows = results.map((r, i) => {
    const previous = results[i - 1];
    const delta = r.heapDelta - (previous?.heapDelta ?? 0);
    const estimate = r.estimates.reduce((a, b) => a + b, 0);
    const added = estimate - (previous?.estimates.reduce((a, b) => a + b, 0) ?? 0);
    return [
      r.case,
      mib(r.heapDelta),
      mib(delta),
      String(Math.round(delta / objects)),
      mib(estimate),
      added > 0 ? (delta / added).toFixed(2) : "-",
      mib(r.heapBeforeGc),
      mib(r.rss),
    ];
  });
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => c.padStart(widths[i]!)).join("  ");
  return [line(header), ...rows.map(line)];
}

function option(name: string): string | undefined {
  const at = Deno.args.indexOf(name);
  return at < 0 ? undefined : Deno.args[at + 1];
}

if (import.meta.main) {
  const objects = Number(option("--objects") ?? 5_000);
  if (!Number.isSafeInteger(objects) || objects < 1) {
    throw new RangeError(`Cannot run: '--objects' must be a positive integer, got ${objects}`);
  }
  const which = option("--case") as Case | undefined;
  const evict = Deno.args.includes("--evict");
  const tracked = option("--events-tracked");
  const eventsTracked = tracked === undefined ? undefined : Number(tracked);
  if (eventsTracked !== undefined && !(Number.isSafeInteger(eventsTracked) && eventsTracked > 0)) {
    throw new RangeError(
      `Cannot run: '--events-tracked' must be a positive integer, got ${tracked}`,
    );
  }
  const options: Omit<CaseOptions, "snapshot"> = {
    objects,
    evict,
    ...(eventsTracked && { eventsTracked }),
  };
  if (which !== undefined) {
    if (!CASES.includes(which)) {
      throw new TypeError(`Unknown case '${which}': expected one of ${CASES.join(", ")}`);
    }
    print(
      JSON.stringify(await measure(which, { ...options, snapshot: option("--snapshot-to") ?? "" })),
    );
  } else {
    const snapshots = Deno.args.includes("--snapshot")
      ? [await Deno.makeTempFile({ suffix: ".heapsnapshot" }), await Deno.makeTempFile()]
      : undefined;
    const results: Measurement[] = [];
    for (const c of CASES) {
      const snapshot = c === "empty" ? snapshots?.[0] : c === "events" ? snapshots?.[1] : undefined;
      results.push(await runCase(c, { ...options, snapshot: snapshot ?? "" }));
    }
    const last = results.at(-1)!;
    const json = last.jsonBytes.map((b) => `${Math.round(b)} B`).join(", ");
    print(
      `Cache memory: ${objects} WebApps with their Deployments and Services ` +
        `(JSON per object: ${json}); deno ${Deno.version.deno}, ` +
        `v8 flags: --expose-gc --max-semi-space-size=1`,
    );
    print(
      `Estimates at the end (MiB): webapps ${mib(last.estimates[0]!)}, deployments ` +
        `${mib(last.estimates[1]!)}, services ${mib(last.estimates[2]!)}; queue length after ` +
        `'queue' ${results[4]?.queueLen}; reconciles run ${last.applied}`,
    );
    print();
    for (const line of table(results, objects)) print(line);
    const { churn, baseHeap, heapDelta } = last;
    if (churn) {
      print();
      print(
        `During the churn (${CHURN_ROUNDS} rounds of MODIFIED Deployment + WebApp and a reconcile ` +
          `per key, ${churn.samples} samples without a forced GC): heapUsed mean ` +
          `${mib(churn.meanUsed)} MiB, max ${mib(churn.maxUsed)} MiB, heapTotal max ` +
          `${mib(churn.maxTotal)} MiB; live after GC ${mib(baseHeap + heapDelta)} MiB ` +
          `(of which ${mib(baseHeap)} MiB before any object was fed)`,
      );
    }
    if (snapshots) {
      print();
      print("Heap snapshot, last case minus empty case, by self size (top 30):");
      for (const line of await summarizeSnapshots(snapshots[0]!, snapshots[1]!, 30)) print(line);
      for (const file of snapshots) await Deno.remove(file);
    }
  }
}
