/**
 * Fault: back-pressure. The API server answers 429 Too Many Requests: API
 * Priority and Fairness puts the operator's ServiceAccount into a priority
 * level of three seats that rejects instead of queueing, so most of what a
 * WebApp operator running ten reconciles at once sends is turned away. Every
 * WebApp must still converge, the process must stay up, and each retry must
 * wait out the server's `Retry-After` instead of hammering it.
 *
 * Note that APF's `Retry-After` is not a constant 1: it starts at 1 s and
 * doubles (up to 32 s) while a priority level keeps rejecting, so an operator
 * that honours it converges more slowly than one that does not, and the test
 * waits generously.
 *
 *   deno run -A hack/with_cluster.ts -- deno test -A tests/reliability/fault_backpressure_test.ts
 */
import assert from "node:assert/strict";
import type { KubeClient } from "../../lib/kube/client.ts";
import { isNotFound } from "../../lib/kube/errors.ts";
import type { KubeObject, Resource } from "../../lib/kube/types.ts";
import { WEB_APPS } from "../../lib/operators/webapp/kind.ts";
import {
  adminClient,
  condition,
  createNamespace,
  deleteNamespace,
  waitFor,
} from "../_support/kube.ts";
import { installCrdsOnce, operatorKubeconfig } from "../_support/crds.ts";
import { KINGLET_SERVICE_ACCOUNT } from "../_support/service_account.ts";
import {
  allConverged,
  createWebApps,
  figure,
  names,
  reconciles,
  seconds,
  startWebAppOperator,
} from "./_faults.ts";

const FLOW_CONTROL = { group: "flowcontrol.apiserver.k8s.io", version: "v1", namespaced: false };
const PRIORITY_LEVELS: Resource = {
  ...FLOW_CONTROL,
  plural: "prioritylevelconfigurations",
  kind: "PriorityLevelConfiguration",
};
const FLOW_SCHEMAS: Resource = { ...FLOW_CONTROL, plural: "flowschemas", kind: "FlowSchema" };

const APPS = 40;
/** Invalid WebApps: no children, so nothing but the retry of a failed status write reconciles them again. */
const PROBES = 10;
const MAX_CONCURRENT_RECONCILES = 10;
/** The smallest `Retry-After` APF sends, in seconds. */
const MIN_RETRY_AFTER_S = 1;

/**
 * Puts every request of kinglet's ServiceAccount into a priority level of its
 * own that rejects what it cannot run at once. Its seats are
 * ceil(serverConcurrencyLimit × 1 / sum of all shares): the test apiserver
 * keeps the default 400 + 200 in-flight limits and the built-in levels hold
 * 245 shares, so ceil(600 / 246) = 3 seats, none lent and none borrowed.
 * Resolves once the apiserver has taken the pair in (the FlowSchema is not
 * Dangling). Give it a new name each time: APF keeps each level's
 * `Retry-After` by name for the life of the apiserver.
 */
async function squeeze(client: KubeClient, name: string): Promise<void> {
  await client.create(PRIORITY_LEVELS, {
    apiVersion: "flowcontrol.apiserver.k8s.io/v1",
    kind: "PriorityLevelConfiguration",
    metadata: { name },
    spec: {
      type: "Limited",
      limited: {
        nominalConcurrencyShares: 1,
        lendablePercent: 0,
        borrowingLimitPercent: 0,
        limitResponse: { type: "Reject" },
      },
    },
  });
  const sa = KINGLET_SERVICE_ACCOUNT;
  await client.create(FLOW_SCHEMAS, {
    apiVersion: "flowcontrol.apiserver.k8s.io/v1",
    kind: "FlowSchema",
    metadata: { name },
    spec: {
      priorityLevelConfiguration: { name },
      // Ahead of the ServiceAccount schemas (900, 9000); after exempt, probes and leader election.
      matchingPrecedence: 500,
      distinguisherMethod: { type: "ByUser" },
      rules: [{
        subjects: [{
          kind: "ServiceAccount",
          serviceAccount: { namespace: sa.namespace, name: sa.name },
        }],
        resourceRules: [{
          verbs: ["*"],
          apiGroups: ["*"],
          resources: ["*"],
          clusterScope: true,
          namespaces: ["*"],
        }],
        nonResourceRules: [{ verbs: ["*"], nonResourceURLs: ["*"] }],
      }],
    },
  });
  await waitFor(`the apiserver to take in FlowSchema ${name}`, async () => {
    const schema = await client.get(FLOW_SCHEMAS, name);
    return condition(schema, "Dangling")?.status === "False";
  });
}

/** Deletes the FlowSchema and priority level: the cluster is shared with the next test. */
async function release(client: KubeClient, name: string): Promise<void> {
  for (const resource of [FLOW_SCHEMAS, PRIORITY_LEVELS]) {
    await client.delete(resource, name).catch((error) => {
      if (!isNotFound(error)) throw error;
    });
  }
}

/** A WebApp kinglet rejects (its memory request exceeds its limit), so it never gets children. */
function probe(namespace: string, name: string): KubeObject {
  return {
    apiVersion: "kinglet.dev/v1alpha1",
    kind: "WebApp",
    metadata: { name, namespace },
    spec: {
      image: "nginx:1.27",
      resources: { requests: { memory: "2Gi" }, limits: { memory: "1Gi" } },
    },
  };
}

/** One reconcile as the log reports it: when it ended and whether a 429 failed it. */
interface Attempt {
  at: number;
  throttled: boolean;
}

/**
 * Each key's reconciles that the controller logs, in order: the failures
 * (429 or not) and the terminal ones (an invalid spec written to status).
 */
function loggedAttempts(log: string): Map<string, Attempt[]> {
  const byKey = new Map<string, Attempt[]>();
  for (const line of log.split("\n")) {
    if (!line.startsWith("{")) continue;
    const record = JSON.parse(line) as {
      "@timestamp": string;
      message: string;
      properties?: { key?: string; error?: string };
    };
    const key = record.properties?.key;
    if (!key || !/^reconcile of .* failed/.test(record.message)) continue;
    const throttled = /\(429 TooManyRequests\)/.test(record.properties?.error ?? "");
    byKey.set(key, [...(byKey.get(key) ?? []), {
      at: Date.parse(record["@timestamp"]),
      throttled,
    }]);
  }
  return byKey;
}

Deno.test("under 429s from API Priority and Fairness, every WebApp converges and each retry waits out Retry-After", async () => {
  const client = await adminClient();
  await installCrdsOnce(client);
  const ns = await createNamespace(client, "fault-429");
  const kubeconfig = await operatorKubeconfig();
  const level = `kinglet-test-squeeze-${crypto.randomUUID().slice(0, 6)}`;
  try {
    await squeeze(client, level);
    await using operator = await startWebAppOperator(kubeconfig, ns, [
      // Ten at once whenever there is work: the squeeze must turn requests away.
      `--max-concurrent-reconciles=${MAX_CONCURRENT_RECONCILES}`,
    ]);
    let exited = false;
    operator.status.then(() => (exited = true));
    await operator.ready(120_000);

    const probes = names("probe", PROBES);
    const apps = names("app", APPS);
    const started = performance.now();
    // The probes after the WebApps, so that their status writes meet the squeeze at its fullest.
    await createWebApps(client, ns, apps);
    await Promise.all(probes.map((name) => client.create(WEB_APPS, probe(ns, name))));
    await waitFor(`${PROBES} probes with InvalidSpec`, async () => {
      const list = await client.list(WEB_APPS, { namespace: ns });
      const rejected = list.items.filter((a) => condition(a, "InvalidSpec")?.status === "True");
      return rejected.length === PROBES;
    }, 240_000);
    // allConverged counts every WebApp in the namespace: the probes never converge.
    await Promise.all(probes.map((name) => client.delete(WEB_APPS, name, { namespace: ns })));
    await allConverged(client, ns, APPS, 300_000);
    const convergedMs = performance.now() - started;

    const throttled = await operator.metric("rest_client_requests_total", { code: "429" });
    const requests = await operator.metric("rest_client_requests_total");
    const failed = await operator.metric("controller_runtime_reconcile_errors_total", {
      controller: "webapp",
    });
    const total = await reconciles(operator);
    const attempts = loggedAttempts(await operator.log());
    // The wait after each 429 of a probe: nothing else requeues a WebApp without children.
    const waits = probes.flatMap((name) => {
      const seen = attempts.get(`${ns}/${name}`) ?? [];
      return seen.slice(1).flatMap((next, i) => seen[i]!.throttled ? [next.at - seen[i]!.at] : []);
    }).sort((a, b) => a - b);
    const objects = APPS + PROBES;
    figure(
      `429 back-pressure: ${APPS} WebApps and ${PROBES} invalid ones through a 3-seat APF level: ` +
        `converged in ${seconds(convergedMs)}; ${throttled} answers 429 of ${requests} requests; ` +
        `${(total / objects).toFixed(1)} reconciles and ${(failed / objects).toFixed(1)} failed ` +
        "reconciles per object",
    );
    figure(
      `429 back-pressure: ${waits.length} retries of a probe after a 429 waited ` +
        `${seconds(waits[0] ?? 0)} to ${seconds(waits.at(-1) ?? 0)} ` +
        `(APF's Retry-After: ${MIN_RETRY_AFTER_S} s, doubling up to 32 s under sustained rejection)`,
    );

    assert.equal(exited, false, "the operator is still running");
    assert.ok(throttled > 0, "the squeeze made the API server answer 429");
    assert.ok(waits.length > 0, "some probe's status write was rejected with 429 and retried");
    // Log times are whole milliseconds; the wait itself never ends early.
    const early = waits.filter((ms) => ms < MIN_RETRY_AFTER_S * 1000 - 2);
    assert.deepEqual(early, [], "no retry after a 429 came before the smallest Retry-After");
    // Bounded, not a storm: a key that waits out Retry-After fails a handful of times
    // (about 4 here, as APF stretches Retry-After while it keeps rejecting). Each failed
    // reconcile is turned away at most twice (its Deployment and Service are applied at
    // once), Event writes are tried at most 3 times, and the watches restart with backoff.
    assert.ok(failed / objects < 15, `${failed} failed reconciles for ${objects} objects`);
    assert.ok(throttled / objects < 40, `${throttled} answers 429 for ${objects} objects`);
    assert.equal(await operator.stop(), 0, "SIGTERM still exits 0");
  } finally {
    await release(client, level);
    await deleteNamespace(client, ns);
    client.close();
  }
});
