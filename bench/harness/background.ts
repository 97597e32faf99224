/**
 * A realistic background: what an edge cluster holds before an operator
 * arrives, created before each run's operator starts so that its lists,
 * watches and caches meet a cluster that is not empty. The objects belong to
 * no target (nothing carries kinglet's labels or the bench's), so any effect
 * on an operator is the price of what it watches without a selector, and of
 * an API server and datastore that hold more.
 *
 * The `realistic` preset, in four namespaces (`platform`, `monitoring`,
 * `team-a`, `team-b`):
 *
 * - 200 Helm release Secrets: 20 releases × 10 revisions (Helm keeps 10 by
 *   default), type `helm.sh/release.v1`, labelled as Helm labels them, each
 *   holding 20–200 KiB of base64 text as Helm stores its gzipped release;
 *   pseudo-random bytes stand in for the gzip stream, which is as
 *   incompressible;
 * - 300 ConfigMaps of 1–8 KiB of text, five beside each Deployment;
 * - 60 Deployments of one replica each (pods kwok runs), and a Service each.
 *
 * Every object comes from a seeded generator: the same preset gives the same
 * objects, byte for byte, to every target and every run.
 *
 * @example
 * ```ts
 * import { backgroundObjects, BACKGROUNDS, describeBackground } from "./background.ts";
 * const realistic = BACKGROUNDS.realistic!;
 * describeBackground(realistic).kinds.map((k) => `${k.count} ${k.kind}`);
 * // ["4 Namespace", "200 Secret", "300 ConfigMap", "60 Service", "60 Deployment"]
 * [...backgroundObjects(realistic)].length; // 624
 * ```
 *
 * @module
 */
import { Buffer } from "node:buffer";
import type { KubeClient } from "../../lib/kube/client.ts";
import { isAlreadyExists } from "../../lib/kube/errors.ts";
import {
  CONFIG_MAPS,
  DEPLOYMENTS,
  NAMESPACES,
  SECRETS,
  SERVICES,
} from "../../lib/kube/resources.ts";
import type { KubeList, KubeObject, Resource } from "../../lib/kube/types.ts";
import { paced, retrying } from "./pace.ts";
import type { BackgroundRecord } from "../measure/results.ts";

const KIB = 1024;

/** Marks the teams' workloads (not the Helm Secrets, which Helm labels its own way). */
const TEAM_LABEL = "example.com/team";

/** Inclusive bounds in bytes. */
export interface ByteRange {
  min: number;
  max: number;
}

/** What a background holds and how fast it is created. */
export interface BackgroundSpec {
  name: string;
  /** Seeds every object's content. */
  seed: number;
  namespaces: readonly string[];
  helmReleases: number;
  /** Revisions kept per release, one Secret each; the last is `deployed`, the rest `superseded`. */
  helmRevisions: number;
  /** Size of a release Secret's `release` value as stored (Helm's base64 text). */
  releaseBytes: ByteRange;
  configMaps: number;
  /** Size of a ConfigMap's one value. */
  configMapBytes: ByteRange;
  /** Deployments, each with a Service. */
  deployments: number;
  replicas: number;
  /** Objects created per second. */
  ratePerSecond: number;
}

/** The backgrounds `--background` names, besides `none`. */
export const BACKGROUNDS: Readonly<Record<string, BackgroundSpec>> = {
  realistic: {
    name: "realistic",
    seed: 24,
    namespaces: ["platform", "monitoring", "team-a", "team-b"],
    helmReleases: 20,
    helmRevisions: 10,
    releaseBytes: { min: 20 * KIB, max: 200 * KIB },
    configMaps: 300,
    configMapBytes: { min: 1 * KIB, max: 8 * KIB },
    deployments: 60,
    replicas: 1,
    ratePerSecond: 50,
  },
};

/** `none` (an empty cluster) and every preset's name. */
export const BACKGROUND_NAMES: readonly string[] = ["none", ...Object.keys(BACKGROUNDS)];

/** One object of the background and where it goes. */
export interface BackgroundObject {
  resource: Resource;
  object: KubeObject;
}

const CHARTS = [
  "traefik",
  "cert-manager",
  "kube-prometheus-stack",
  "grafana",
  "loki",
  "promtail",
  "metrics-server",
  "longhorn",
  "redis",
  "postgresql",
  "mosquitto",
  "node-red",
  "influxdb",
  "telegraf",
  "vector",
  "fluent-bit",
  "sealed-secrets",
  "external-dns",
  "argo-cd",
  "minio",
];

const APPS = [
  "api",
  "web",
  "worker",
  "gateway",
  "auth",
  "billing",
  "search",
  "cache",
  "queue",
  "ingest",
  "sensor",
  "camera",
  "telemetry",
  "scheduler",
  "notifier",
  "reports",
  "inventory",
  "orders",
  "media",
  "sync",
];

const CONFIG_ROLES = ["config", "env", "dashboards", "rules", "scripts"];

/**
 * Every object of `spec`, built one at a time when drawn: the namespaces,
 * then Secrets, ConfigMaps, Services and Deployments last, so that their
 * pods start once everything else is stored.
 */
export function* backgroundObjects(spec: BackgroundSpec): Generator<BackgroundObject> {
  for (const name of spec.namespaces) {
    yield {
      resource: NAMESPACES,
      object: { apiVersion: "v1", kind: "Namespace", metadata: { name } },
    };
  }
  for (let release = 0; release < spec.helmReleases; release++) {
    for (let revision = 1; revision <= spec.helmRevisions; revision++) {
      yield { resource: SECRETS, object: helmRelease(spec, release, revision) };
    }
  }
  for (let i = 0; i < spec.configMaps; i++) {
    yield { resource: CONFIG_MAPS, object: configMap(spec, i) };
  }
  for (let i = 0; i < spec.deployments; i++) yield { resource: SERVICES, object: service(spec, i) };
  for (let i = 0; i < spec.deployments; i++) {
    yield { resource: DEPLOYMENTS, object: deployment(spec, i) };
  }
}

/**
 * What `spec` creates, per kind in creation order: how many objects and the
 * bytes of their JSON as sent (sum, smallest, largest).
 */
export function describeBackground(spec: BackgroundSpec): BackgroundRecord {
  const kinds = new Map<string, BackgroundRecord["kinds"][number]>();
  for (const { object } of backgroundObjects(spec)) {
    const bytes = jsonBytes(object);
    const kind = kinds.get(object.kind!);
    if (!kind) {
      kinds.set(object.kind!, {
        kind: object.kind!,
        count: 1,
        bytes,
        minBytes: bytes,
        maxBytes: bytes,
      });
      continue;
    }
    kind.count++;
    kind.bytes += bytes;
    kind.minBytes = Math.min(kind.minBytes, bytes);
    kind.maxBytes = Math.max(kind.maxBytes, bytes);
  }
  return {
    name: spec.name,
    seed: spec.seed,
    namespaces: [...spec.namespaces],
    replicas: spec.replicas,
    ratePerSecond: spec.ratePerSecond,
    kinds: [...kinds.values()],
  };
}

/** Options of {@link fillBackground}. */
export interface FillOptions {
  /** Longest wait for the Deployments to be available. */
  timeoutMs: number;
  signal?: AbortSignal;
}

/** What filling took, in milliseconds. */
export interface FillTimes {
  /** Creating every object at the spec's rate. */
  createMs: number;
  /** From the last create until every Deployment had its replicas available. */
  availableMs: number;
}

/**
 * Creates every object of `spec` at its rate (an object that already exists
 * counts as created), then waits until every Deployment has all its replicas
 * available, so that the run starts on a quiet cluster.
 *
 * @throws {Error} when the Deployments are not available within `timeoutMs`,
 *   saying how many are.
 */
export async function fillBackground(
  client: Pick<KubeClient, "create" | "list">,
  spec: BackgroundSpec,
  options: FillOptions,
): Promise<FillTimes> {
  const { signal } = options;
  const started = performance.now();
  const create = ({ resource, object }: BackgroundObject) =>
    retrying(async () => {
      try {
        await client.create(resource, object, signal ? { signal } : {});
      } catch (error) {
        if (!isAlreadyExists(error)) throw error;
      }
    }, signal);
  const objects = backgroundObjects(spec);
  // The namespaces come first and must exist before anything is created in them.
  for (const _ of spec.namespaces) await create(objects.next().value as BackgroundObject);
  await paced(objects, { ratePerSecond: spec.ratePerSecond, inFlight: 8 }, signal, create);
  const created = performance.now();
  const deadline = created + options.timeoutMs;
  for (;;) {
    const available = await availableDeployments(client, spec, signal);
    if (available === spec.deployments) break;
    if (performance.now() > deadline) {
      throw new Error(
        `The background's Deployments were not available within ${options.timeoutMs} ms: ` +
          `${available} of ${spec.deployments} had their ${spec.replicas} replica(s)`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
    signal?.throwIfAborted();
  }
  return { createMs: created - started, availableMs: performance.now() - created };
}

interface Deployment extends KubeObject {
  spec?: { replicas?: number };
  status?: { observedGeneration?: number; availableReplicas?: number; replicas?: number };
}

async function availableDeployments(
  client: Pick<KubeClient, "list">,
  spec: BackgroundSpec,
  signal: AbortSignal | undefined,
): Promise<number> {
  let available = 0;
  for (const namespace of spec.namespaces) {
    const list: KubeList<Deployment> = await client.list<Deployment>(DEPLOYMENTS, {
      namespace,
      labelSelector: TEAM_LABEL,
      ...(signal && { signal }),
    });
    available += list.items.filter((d) =>
      (d.status?.observedGeneration ?? 0) >= (d.metadata?.generation ?? 1) &&
      (d.status?.availableReplicas ?? 0) === (d.spec?.replicas ?? 1) &&
      (d.status?.replicas ?? 0) === (d.spec?.replicas ?? 1)
    ).length;
  }
  return available;
}

function helmRelease(spec: BackgroundSpec, release: number, revision: number): KubeObject {
  const chart = CHARTS[release % CHARTS.length]!;
  const name = release < CHARTS.length ? chart : `${chart}-${Math.floor(release / CHARTS.length)}`;
  const namespace = spec.namespaces[release % spec.namespaces.length]!;
  // Revisions of one release are about the same size: the chart changes little between upgrades.
  const base = random(spec, `release/${name}`);
  const size = within(
    spec.releaseBytes,
    base.fraction() * 0.9 + random(spec, `${name}/${revision}`).fraction() * 0.1,
  );
  const gzip = random(spec, `release/${namespace}/${name}/${revision}`).bytes(
    Math.floor(size / 4) * 3,
  );
  const stored = gzip.toString("base64");
  return {
    apiVersion: "v1",
    kind: "Secret",
    type: "helm.sh/release.v1",
    metadata: {
      name: `sh.helm.release.v1.${name}.v${revision}`,
      namespace,
      labels: {
        owner: "helm",
        name,
        status: revision === spec.helmRevisions ? "deployed" : "superseded",
        version: String(revision),
        modifiedAt: String(1_760_000_000 + release * 86_400 + revision * 3_600),
      },
    },
    data: { release: Buffer.from(stored).toString("base64") },
  } as KubeObject;
}

function configMap(spec: BackgroundSpec, index: number): KubeObject {
  const app = index % spec.deployments;
  const role = CONFIG_ROLES[Math.floor(index / spec.deployments) % CONFIG_ROLES.length]!;
  const suffix = index >= spec.deployments * CONFIG_ROLES.length
    ? `-${Math.floor(index / (spec.deployments * CONFIG_ROLES.length))}`
    : "";
  const owner = appName(app);
  const rng = random(spec, `configmap/${owner}/${role}${suffix}`);
  const size = within(spec.configMapBytes, rng.fraction());
  const lines: string[] = [];
  let length = 0;
  while (length < size) {
    const line = `${APPS[rng.below(APPS.length)]}_${rng.below(1000)}: ${
      rng.hex(8 + rng.below(48))
    }\n`;
    lines.push(line);
    length += line.length;
  }
  const text = lines.join("").slice(0, size - 1) + "\n";
  return {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: {
      name: `${owner}-${role}${suffix}`,
      namespace: appNamespace(spec, app),
      labels: teamLabels(spec, app),
    },
    data: { [`${role}.yaml`]: text },
  } as KubeObject;
}

function service(spec: BackgroundSpec, index: number): KubeObject {
  return {
    apiVersion: "v1",
    kind: "Service",
    metadata: {
      name: appName(index),
      namespace: appNamespace(spec, index),
      labels: teamLabels(spec, index),
    },
    spec: {
      type: "ClusterIP",
      selector: selectorOf(index),
      ports: [{ name: "http", port: 80, targetPort: "http", protocol: "TCP" }],
    },
  };
}

function deployment(spec: BackgroundSpec, index: number): KubeObject {
  const rng = random(spec, `deployment/${appName(index)}`);
  const env = Array.from({ length: 2 + rng.below(7) }, (_, i) => ({
    name: `${APPS[rng.below(APPS.length)]!.toUpperCase()}_SETTING_${i}`,
    value: rng.hex(4 + rng.below(28)),
  }));
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: {
      name: appName(index),
      namespace: appNamespace(spec, index),
      labels: teamLabels(spec, index),
    },
    spec: {
      replicas: spec.replicas,
      selector: { matchLabels: selectorOf(index) },
      template: {
        metadata: { labels: { ...selectorOf(index), ...teamLabels(spec, index) } },
        spec: {
          containers: [{
            name: "app",
            image: "registry.k8s.io/pause:3.10",
            ports: [{ name: "http", containerPort: 8080 }],
            env,
            resources: {
              requests: { cpu: "10m", memory: "32Mi" },
              limits: { memory: "64Mi" },
            },
          }],
        },
      },
    },
  } as KubeObject;
}

function appName(index: number): string {
  return `${APPS[index % APPS.length]}-${Math.floor(index / APPS.length) + 1}`;
}

function appNamespace(spec: BackgroundSpec, index: number): string {
  return spec.namespaces[index % spec.namespaces.length]!;
}

function selectorOf(index: number): Record<string, string> {
  return { "app.kubernetes.io/name": appName(index) };
}

function teamLabels(spec: BackgroundSpec, index: number): Record<string, string> {
  return {
    "app.kubernetes.io/name": appName(index),
    "app.kubernetes.io/managed-by": "Helm",
    [TEAM_LABEL]: appNamespace(spec, index),
  };
}

function within(range: ByteRange, fraction: number): number {
  return range.min + Math.floor(fraction * (range.max - range.min + 1));
}

function jsonBytes(object: KubeObject): number {
  return new TextEncoder().encode(JSON.stringify(object)).byteLength;
}

interface Random {
  /** In [0, 1). */
  fraction(): number;
  /** An integer in [0, n). */
  below(n: number): number;
  hex(length: number): string;
  bytes(length: number): Buffer;
}

/** mulberry32, seeded by the spec's seed and `key` (FNV-1a), so objects do not depend on order. */
function random(spec: BackgroundSpec, key: string): Random {
  let state = 0x811c9dc5 ^ spec.seed;
  for (let i = 0; i < key.length; i++) state = Math.imul(state ^ key.charCodeAt(i), 0x01000193);
  const next = () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return (t ^ (t >>> 14)) >>> 0;
  };
  return {
    fraction: () => next() / 2 ** 32,
    below: (n) => Math.floor((next() / 2 ** 32) * n),
    hex: (length) => {
      let text = "";
      while (text.length < length) text += next().toString(16).padStart(8, "0");
      return text.slice(0, length);
    },
    bytes: (length) => {
      const out = Buffer.alloc(length);
      for (let i = 0; i < length; i += 4) {
        const word = next();
        for (let b = 0; b < 4 && i + b < length; b++) out[i + b] = (word >>> (8 * b)) & 0xff;
      }
      return out;
    },
  };
}
