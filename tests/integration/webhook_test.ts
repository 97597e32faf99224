/**
 * Webhooks against the real control plane, as in node mode: the API server
 * calls a kinglet manager on loopback (`https://127.0.0.1:<port>`) through
 * the configurations `deploy` writes, with the CA the manager made and
 * injected itself. A denial's message reaches kubectl, a default is
 * applied, an object written as one version is read as the other and back,
 * objects stored in an older version are migrated to the new storage
 * version, and the certificates rotate under load with every admission
 * answered.
 *
 *   deno run -A hack/with_cluster.ts -- deno test -A tests/integration/webhook_test.ts
 */
import assert from "node:assert/strict";
import { z } from "zod";
import { defineKind } from "../../lib/crd/mod.ts";
import { describeOperator } from "../../lib/deploy/operator.ts";
import {
  WEBHOOK_CONFIGURATIONS,
  webhookConfigurations,
  webhookService,
} from "../../lib/deploy/webhook_files.ts";
import type { KubeClient } from "../../lib/kube/client.ts";
import { ApiError } from "../../lib/kube/errors.ts";
import {
  CONFIG_MAPS,
  CUSTOM_RESOURCE_DEFINITIONS,
  LEASES,
  MUTATING_WEBHOOK_CONFIGURATIONS,
  SECRETS,
  SERVICES,
  VALIDATING_WEBHOOK_CONFIGURATIONS,
} from "../../lib/kube/resources.ts";
import type { KubeObject, Resource } from "../../lib/kube/types.ts";
import { Manager } from "../../lib/runtime/manager/mod.ts";
import { installCrds, migrateStorageVersion } from "../../lib/runtime/crds/mod.ts";
import {
  type AdmissionWebhook,
  allowed,
  defineConversion,
  denied,
  webhookObjectNames,
} from "../../lib/runtime/webhook/mod.ts";
import { freePorts } from "../../lib/testing/control_plane/mod.ts";
import { kubectl } from "../_support/cluster.ts";
import { adminClient, createNamespace, deleteNamespace, waitFor } from "../_support/kube.ts";

const GROUP = "webhooks.kinglet.test";
const ENDPOINTS: Resource = {
  group: "",
  version: "v1",
  plural: "endpoints",
  kind: "Endpoints",
  namespaced: true,
};
const VALVES: Resource = {
  group: GROUP,
  version: "v2",
  plural: "valves",
  kind: "Valve",
  namespaced: true,
};
type Valve = KubeObject & {
  spec: { replicas?: number; size?: string; tier?: string; configMap?: string };
};

/** v1alpha1 says `size: "3"` where v2 says `replicas: 3`; the rest is the same. */
const conversion = defineConversion({
  resource: VALVES,
  hub: "v2",
  versions: {
    v1alpha1: {
      toHub: (o) => {
        const { size, ...rest } = (o as Valve).spec;
        return { ...o, spec: { ...rest, ...(size !== undefined && { replicas: Number(size) }) } };
      },
      fromHub: (o) => {
        const { replicas, ...rest } = (o as Valve).spec;
        return {
          ...o,
          spec: { ...rest, ...(replicas !== undefined && { size: String(replicas) }) },
        };
      },
    },
  },
});

const common = {
  tier: z.string().optional(),
  configMap: z.string().optional(),
};
const v1alpha1 = { name: "v1alpha1", spec: z.object({ size: z.string(), ...common }) };
const v2 = { name: "v2", spec: z.object({ replicas: z.int32(), ...common }), storage: true };
const valves = defineKind({ group: GROUP, kind: "Valve", versions: [v1alpha1, v2], conversion });
/** The same kind before v2: v1alpha1 alone, served and stored. */
const valvesBefore = defineKind({
  group: GROUP,
  kind: "Valve",
  version: "v1alpha1",
  spec: v1alpha1.spec,
});

/** Denies a Valve naming a ConfigMap that does not exist (CEL cannot look); defaults the tier. */
const admission: AdmissionWebhook<Valve> = {
  resource: VALVES,
  async validate({ object, namespace }, { client, signal }) {
    const name = object?.spec.configMap;
    if (!name) return allowed();
    try {
      await client.get(CONFIG_MAPS, name, { namespace, signal });
      return allowed();
    } catch (e) {
      if (e instanceof ApiError && e.status === 404) {
        return denied(`spec.configMap: ConfigMap ${name} does not exist in ${namespace}`);
      }
      throw e;
    }
  },
  default(valve) {
    valve.spec.tier ??= "standard";
    return valve;
  },
};

const OPERATOR = "valve-operator";
const LEASE = "valve-operator-leader";

function operatorOf(port: number, namespace: string) {
  return describeOperator({
    name: OPERATOR,
    namespace,
    envPrefix: "VALVE_",
    image: "example.com/valve-operator:0.0.0",
    controllers: [{ name: "valves", resource: VALVES }],
    webhooks: { admission: [admission as AdmissionWebhook], conversions: [conversion], port },
  });
}

interface Running {
  client: KubeClient;
  namespace: string;
  system: string;
  stop(): Promise<void>;
}

/**
 * Applies the configurations and runs a manager serving the webhooks: by
 * URL on loopback (node mode), or through the Service in front of it (a
 * pod), whose endpoint is this machine's own address since no pod runs.
 */
async function serve(
  options: {
    caLifetimeMs?: number;
    servingLifetimeMs?: number;
    standby?: boolean;
    reach?: { service: string };
  } = {},
): Promise<Running> {
  const { standby, reach, ...lifetimes } = options;
  const client = await adminClient();
  const [port] = freePorts(1);
  const system = await createNamespace(client, "valve-system");
  const namespace = await createNamespace(client, "valves");
  const operator = operatorOf(port!, system);
  const configurations = webhookConfigurations(operator, reach ? "service" : "url");
  if (reach) {
    // The Service deploy writes, without its selector: its endpoint is made here, as no pod runs.
    const { spec, ...service } = webhookService(operator);
    const ports = (spec as { ports: { name: string }[] }).ports;
    await client.create(SERVICES, { ...service, spec: { ports } } as KubeObject);
    await client.create(ENDPOINTS, {
      apiVersion: "v1",
      kind: "Endpoints",
      metadata: { name: service.metadata.name, namespace: system },
      subsets: [{
        addresses: [{ ip: reach.service }],
        ports: [{ name: ports[0]!.name, port, protocol: "TCP" }],
      }],
    });
  }
  for (const configuration of configurations) {
    await client.apply(
      WEBHOOK_CONFIGURATIONS[configuration.kind as string]!,
      configuration as KubeObject,
      { fieldManager: "webhook-test", force: true },
    );
  }
  if (standby) {
    // Another candidate holds the Lease for an hour: this one stands by, and serves all the same.
    await client.create(LEASES, {
      apiVersion: "coordination.k8s.io/v1",
      kind: "Lease",
      metadata: { name: LEASE, namespace: system },
      spec: {
        holderIdentity: "another-node",
        leaseDurationSeconds: 3600,
        renewTime: new Date().toISOString().replace("Z", "000Z"),
      },
    });
  }
  const manager = new Manager({
    ...(standby && { leaderElection: { namespace: system, name: LEASE, identity: "this-node" } }),
    client,
    metricsAddress: "0",
    healthAddress: "0",
    reportingInstance: "webhook-test",
    crds: [valves.crd()],
    webhook: {
      operator: OPERATOR,
      address: `${reach ? reach.service : "127.0.0.1"}:${port}`,
      ...(reach && { service: { namespace: system } }),
      certificates: { namespace: system },
      settleMs: 1_000,
      refreshMs: 500,
      ...lifetimes,
    },
  });
  manager.addWebhook(admission as AdmissionWebhook);
  manager.addWebhook(conversion);
  const stop = new AbortController();
  const running = manager.run(stop.signal);
  running.catch(() => {});
  // The CRD is installed once the server answers: until then nothing is served in v2.
  await waitFor("the Valve CRD storing v2", async () => {
    type Crd = KubeObject & {
      spec: { versions: { name: string; storage: boolean }[] };
      status?: { conditions?: { type: string; status: string }[] };
    };
    const crd = await client.get<Crd>(CUSTOM_RESOURCE_DEFINITIONS, `valves.${GROUP}`)
      .catch(() => undefined);
    const established = crd?.status?.conditions?.some((c) =>
      c.type === "Established" && c.status === "True"
    );
    return established && crd?.spec.versions.find((v) => v.storage)?.name === "v2";
  });
  return {
    client,
    namespace,
    system,
    async stop() {
      // While the conversion still answers: the namespace controller lists Valves to empty them.
      await deleteNamespace(client, namespace);
      await deleteNamespace(client, system);
      stop.abort();
      await running;
      for (const configuration of configurations) {
        const resource = WEBHOOK_CONFIGURATIONS[configuration.kind as string]!;
        await client.delete(resource, configuration.metadata.name as string).catch(() => {});
      }
      // A CRD whose conversion no longer answers would stall every namespace's deletion.
      await client.delete(CUSTOM_RESOURCE_DEFINITIONS, `valves.${GROUP}`).catch(() => {});
      await waitFor(
        "the Valve CRD to be gone",
        async () =>
          (await client.get(CUSTOM_RESOURCE_DEFINITIONS, `valves.${GROUP}`).catch(() =>
            undefined
          )) === undefined,
      );
      client.close();
    },
  };
}

function valveYaml(namespace: string, name: string, version: "v1alpha1" | "v2", spec: object) {
  return JSON.stringify({
    apiVersion: `${GROUP}/${version}`,
    kind: "Valve",
    metadata: { name, namespace },
    spec,
  });
}

async function kubectlGet(namespace: string, resource: string, name: string): Promise<Valve> {
  const { code, stdout, stderr } = await kubectl([
    "get",
    resource,
    name,
    "-n",
    namespace,
    "-o",
    "json",
  ]);
  assert.equal(code, 0, stderr);
  return JSON.parse(stdout);
}

Deno.test("the API server calls a standby kinglet on loopback: denials, defaults and conversion", async (t) => {
  const { client, namespace, system, stop } = await serve({ standby: true });
  try {
    await t.step(
      "the CA lives in the operator's Secret and is in both configurations",
      async () => {
        const names = webhookObjectNames(OPERATOR);
        const secret = await client.get<KubeObject & { data?: Record<string, string> }>(
          SECRETS,
          names.secret,
          { namespace: system },
        );
        const bundle = secret.data?.["ca.crt"];
        assert.ok(bundle);
        for (
          const [resource, name] of [
            [VALIDATING_WEBHOOK_CONFIGURATIONS, names.validating],
            [MUTATING_WEBHOOK_CONFIGURATIONS, names.mutating],
          ] as const
        ) {
          const configuration = await client.get<
            KubeObject & { webhooks: { clientConfig: { caBundle?: string } }[] }
          >(resource, name);
          assert.equal(configuration.webhooks[0]?.clientConfig.caBundle, bundle, name);
        }
      },
    );

    await t.step("a denial's message reaches kubectl", async () => {
      const { code, stderr } = await kubectl(["apply", "-f", "-"], {
        stdin: valveYaml(namespace, "dry", "v2", { replicas: 1, configMap: "missing" }),
      });
      assert.notEqual(code, 0);
      assert.match(
        stderr,
        /admission webhook "vvalves\.webhooks\.kinglet\.test" denied the request/,
      );
      assert.match(stderr, /spec\.configMap: ConfigMap missing does not exist in valves-/);
    });

    await t.step("a ConfigMap that exists is allowed, and the tier defaulted", async () => {
      await client.create(CONFIG_MAPS, {
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name: "water", namespace },
      });
      const { code, stderr } = await kubectl(["apply", "-f", "-"], {
        stdin: valveYaml(namespace, "wet", "v2", { replicas: 2, configMap: "water" }),
      });
      assert.equal(code, 0, stderr);
      const valve = await kubectlGet(namespace, `valves.v2.${GROUP}`, "wet");
      assert.deepEqual(valve.spec, { replicas: 2, configMap: "water", tier: "standard" });
    });

    await t.step("written as v1alpha1, read as v2, and back", async () => {
      const { code, stderr } = await kubectl(["apply", "-f", "-"], {
        stdin: valveYaml(namespace, "old", "v1alpha1", { size: "3", tier: "gold" }),
      });
      assert.equal(code, 0, stderr);
      const asV2 = await kubectlGet(namespace, `valves.v2.${GROUP}`, "old");
      assert.equal(asV2.apiVersion, `${GROUP}/v2`);
      assert.deepEqual(asV2.spec, { replicas: 3, tier: "gold" });
      const asV1 = await kubectlGet(namespace, `valves.v1alpha1.${GROUP}`, "wet");
      assert.equal(asV1.apiVersion, `${GROUP}/v1alpha1`);
      assert.deepEqual(asV1.spec, { size: "2", configMap: "water", tier: "standard" });
    });
    await t.step("all the while another candidate leads", async () => {
      const lease = await client.get<KubeObject & { spec: { holderIdentity?: string } }>(
        LEASES,
        LEASE,
        { namespace: system },
      );
      assert.equal(lease.spec.holderIdentity, "another-node");
    });
  } finally {
    await stop();
  }
});

Deno.test("objects stored as v1alpha1 are migrated to the v2 storage version", async () => {
  const client = await adminClient();
  const crdName = `valves.${GROUP}`;
  // The kind as it was: v1alpha1 alone, with objects stored in it.
  await client.delete(CUSTOM_RESOURCE_DEFINITIONS, crdName).catch(() => {});
  await waitFor(
    "the Valve CRD to be gone",
    async () =>
      (await client.get(CUSTOM_RESOURCE_DEFINITIONS, crdName).catch(() => undefined)) === undefined,
  );
  await installCrds(client, [valvesBefore.crd()], { fieldManager: "webhook-test" });
  const before = await createNamespace(client, "valves-before");
  const old = { ...VALVES, version: "v1alpha1" };
  for (const name of ["a", "b", "c"]) {
    await client.create(old, {
      apiVersion: `${GROUP}/v1alpha1`,
      kind: "Valve",
      metadata: { name, namespace: before },
      spec: { size: "4" },
    });
  }
  const versionsBefore = (await client.list(old, { namespace: before })).items.map((o) =>
    o.metadata?.resourceVersion
  );
  client.close();
  // The upgrade: the operator serving the conversion installs the CRD with v2 stored.
  const running = await serve();
  try {
    const crd = await running.client.get<KubeObject & { status?: { storedVersions?: string[] } }>(
      CUSTOM_RESOURCE_DEFINITIONS,
      crdName,
    );
    assert.deepEqual(crd.status?.storedVersions?.toSorted(), ["v1alpha1", "v2"]);
    const { storageVersion, migrated } = await migrateStorageVersion(running.client, crdName);
    assert.equal(storageVersion, "v2");
    assert.ok(migrated >= 3, `migrated ${migrated}`);
    const after = await running.client.get<KubeObject & { status?: { storedVersions?: string[] } }>(
      CUSTOM_RESOURCE_DEFINITIONS,
      crdName,
    );
    assert.deepEqual(after.status?.storedVersions, ["v2"]);
    const items = (await running.client.list<Valve>(VALVES, { namespace: before })).items;
    assert.deepEqual(items.map((o) => o.spec.replicas), [4, 4, 4]);
    // Each was written again (stored anew in v2), so each has a new resourceVersion.
    for (const [i, item] of items.entries()) {
      assert.notEqual(item.metadata?.resourceVersion, versionsBefore[i]);
    }
  } finally {
    await deleteNamespace(running.client, before);
    await running.stop();
  }
});

Deno.test("the serving certificate and the CA rotate under load with every admission answered", async () => {
  const { client, namespace, system, stop } = await serve({
    caLifetimeMs: 24_000,
    servingLifetimeMs: 6_000,
  });
  try {
    const secretName = webhookObjectNames(OPERATOR).secret;
    const read = async () =>
      (await client.get<KubeObject & { data: Record<string, string> }>(SECRETS, secretName, {
        namespace: system,
      })).data;
    const first = await read();
    const seen = { serving: new Set([first["tls.crt"]]), ca: new Set([first["ca-current.crt"]]) };
    const failures: string[] = [];
    let answered = 0;
    const endAt = Date.now() + 30_000;
    let i = 0;
    while (Date.now() < endAt) {
      const denied = i % 2 === 0;
      const spec = denied ? { replicas: 1, configMap: "absent" } : { replicas: 1 };
      try {
        await client.create(VALVES, {
          apiVersion: `${GROUP}/v2`,
          kind: "Valve",
          metadata: { name: `load-${i}`, namespace },
          spec,
        }, { dryRun: true });
        if (denied) failures.push(`load-${i} was allowed`);
      } catch (e) {
        const message = e instanceof Error ? e.message : String(e);
        if (!denied || !/ConfigMap absent does not exist/.test(message)) {
          failures.push(`load-${i}: ${message}`);
        }
      }
      answered++;
      i++;
      if (i % 10 === 0) {
        const data = await read();
        seen.serving.add(data["tls.crt"]);
        seen.ca.add(data["ca-current.crt"]);
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    assert.deepEqual(failures, [], `${failures.length} of ${answered} admissions failed`);
    assert.ok(seen.serving.size >= 3, `serving certificates seen: ${seen.serving.size}`);
    assert.ok(seen.ca.size >= 2, `CAs seen: ${seen.ca.size}`);
  } finally {
    await stop();
  }
});

/** This machine's first IPv4 address that is not loopback: the endpoint a pod would have. */
function ownAddress(): string | undefined {
  return Deno.networkInterfaces().find((i) => i.family === "IPv4" && !i.address.startsWith("127."))
    ?.address;
}

Deno.test({
  name: "in a pod the API server calls kinglet through its Service, the certificate naming it",
  ignore: ownAddress() === undefined,
  async fn() {
    const { namespace, stop } = await serve({ reach: { service: ownAddress()! } });
    try {
      const { code, stderr } = await kubectl(["apply", "-f", "-"], {
        stdin: valveYaml(namespace, "by-service", "v2", { replicas: 1, configMap: "missing" }),
      });
      assert.notEqual(code, 0);
      assert.match(stderr, /spec\.configMap: ConfigMap missing does not exist/);
      const created = await kubectl(["apply", "-f", "-"], {
        stdin: valveYaml(namespace, "by-service", "v1alpha1", { size: "2" }),
      });
      assert.equal(created.code, 0, created.stderr);
      const valve = await kubectlGet(namespace, `valves.v2.${GROUP}`, "by-service");
      assert.deepEqual(valve.spec, { replicas: 2, tier: "standard" });
    } finally {
      await stop();
    }
  },
});
if (ownAddress() === undefined) {
  // deno-lint-ignore no-console -- a skipped test says why, visibly
  console.warn(
    "webhook_test: skipping the Service test: this machine has no IPv4 address but loopback, " +
      "which an Endpoints object may not name",
  );
}
