import assert from "node:assert/strict";
import type { V1StatefulSet } from "../../lib/operators/models.ts";
import { findCondition } from "../../lib/runtime/mod.ts";
import { generatePassword } from "../../lib/operators/database/password.ts";
import {
  credentialsSecretName,
  databaseEndpoint,
  renderCredentialsSecret,
  renderDatabaseCluster,
} from "../../lib/operators/database/render.ts";
import {
  type DatabaseCluster,
  validateDatabaseCluster,
} from "../../lib/operators/database/kind.ts";
import { databaseStatus, invalidDatabaseStatus } from "../../lib/operators/database/status.ts";

const NOW = new Date("2025-03-01T12:00:00Z");

function cluster(
  spec: Record<string, unknown> = {},
  extra: Partial<DatabaseCluster> = {},
): DatabaseCluster {
  const result = validateDatabaseCluster({
    engine: "postgres",
    version: "17",
    storage: { size: "10Gi" },
    ...spec,
  });
  if (!result.ok) throw new Error(result.message);
  return {
    apiVersion: "kinglet.dev/v1alpha2",
    kind: "DatabaseCluster",
    metadata: { name: "orders", namespace: "shop", uid: "uid-orders", generation: 2 },
    spec: result.spec,
    ...extra,
  };
}

function statefulSet(replicas: number, readyReplicas: number): V1StatefulSet {
  return {
    spec: { replicas, selector: {}, serviceName: "orders-headless", template: {} },
    status: { replicas, readyReplicas },
  };
}

Deno.test("a DatabaseCluster spec defaults to one replica and the Retain policy", () => {
  const result = validateDatabaseCluster({
    engine: "mysql",
    version: "8.4",
    storage: { size: "1Gi" },
  });
  assert.ok(result.ok);
  assert.equal(result.spec.replicas, 1);
  assert.equal(result.spec.deletionPolicy, "Retain");
});

Deno.test("a DatabaseCluster spec needs a supported engine and a version valid for it", () => {
  const engine = validateDatabaseCluster({
    engine: "oracle",
    version: "23",
    storage: { size: "1Gi" },
  });
  assert.ok(!engine.ok);
  assert.equal(
    engine.message,
    'spec.engine: "oracle" is not supported; use one of postgres, mysql',
  );
  const version = validateDatabaseCluster({
    engine: "postgres",
    version: "9.6",
    storage: { size: "1Gi" },
  });
  assert.ok(!version.ok);
  assert.equal(
    version.message,
    'spec.version: "9.6" is not a supported postgres version; use 14, 15, 16 or 17, optionally with a minor (e.g. 17.2), or set spec.image',
  );
  for (
    const [engine, good] of [["postgres", "16.4"], ["mysql", "8.0"], ["mysql", "8.4.3"]] as const
  ) {
    assert.ok(
      validateDatabaseCluster({ engine, version: good, storage: { size: "1Gi" } }).ok,
      good,
    );
  }
  assert.ok(
    !validateDatabaseCluster({ engine: "mysql", version: "8.40", storage: { size: "1Gi" } }).ok,
  );
});

Deno.test("a custom image lifts the version check but not the tag syntax", () => {
  const spec = { engine: "postgres", storage: { size: "1Gi" }, image: "registry.local/pg:custom" };
  assert.ok(validateDatabaseCluster({ ...spec, version: "18beta1" }).ok);
  const bad = validateDatabaseCluster({ ...spec, version: "18 beta" });
  assert.ok(!bad.ok);
  assert.match(bad.message, /^spec\.version: must be an image tag/);
});

Deno.test("a DatabaseCluster spec rejects zero storage, zero replicas and requests above limits", () => {
  const result = validateDatabaseCluster({
    engine: "postgres",
    version: "17",
    storage: { size: "0Gi" },
    resources: { requests: { cpu: "2" }, limits: { cpu: "1" } },
  });
  assert.ok(!result.ok);
  assert.deepEqual(result.problems, [
    "spec.storage.size: must be greater than zero",
    "spec.resources.requests.cpu: request 2 exceeds the limit 1; pods would be rejected",
  ]);
  const replicas = validateDatabaseCluster({
    engine: "postgres",
    version: "17",
    storage: { size: "1Gi" },
    replicas: 0,
  });
  assert.ok(!replicas.ok);
  assert.equal(replicas.message, "spec.replicas: must be at least 1, got 0");
});

Deno.test("renderDatabaseCluster renders a StatefulSet with a data volume per pod", () => {
  const { statefulSet } = renderDatabaseCluster(
    cluster({
      replicas: 3,
      storage: { size: "10Gi", className: "local-path" },
      resources: { limits: { memory: "1Gi" } },
    }),
  );
  assert.equal(statefulSet.apiVersion, "apps/v1");
  assert.equal(statefulSet.kind, "StatefulSet");
  assert.equal(statefulSet.metadata?.name, "orders");
  assert.equal(statefulSet.metadata?.ownerReferences?.[0]?.kind, "DatabaseCluster");
  const spec = statefulSet.spec!;
  assert.equal(spec.serviceName, "orders-headless");
  assert.equal(spec.replicas, 3);
  assert.deepEqual(spec.selector.matchLabels, {
    "app.kubernetes.io/name": "databasecluster",
    "app.kubernetes.io/instance": "orders",
  });
  assert.deepEqual(spec.persistentVolumeClaimRetentionPolicy, {
    whenDeleted: "Retain",
    whenScaled: "Retain",
  });
  const container = spec.template.spec!.containers[0]!;
  assert.equal(container.image, "docker.io/library/postgres:17");
  assert.deepEqual(container.ports, [{ name: "db", containerPort: 5432, protocol: "TCP" }]);
  assert.deepEqual(container.volumeMounts, [{
    name: "data",
    mountPath: "/var/lib/postgresql/data",
  }]);
  assert.deepEqual(container.resources, { limits: { memory: "1Gi" } });
  assert.deepEqual(spec.volumeClaimTemplates, [{
    metadata: {
      name: "data",
      labels: {
        "app.kubernetes.io/name": "databasecluster",
        "app.kubernetes.io/instance": "orders",
        "app.kubernetes.io/managed-by": "kinglet",
      },
    },
    spec: {
      accessModes: ["ReadWriteOnce"],
      resources: { requests: { storage: "10Gi" } },
      storageClassName: "local-path",
    },
  }]);
});

Deno.test("the database container reads its password from the credentials Secret, never inline", () => {
  const { statefulSet } = renderDatabaseCluster(cluster());
  const env = statefulSet.spec!.template.spec!.containers[0]!.env!;
  const password = env.find((variable) => variable.name === "POSTGRES_PASSWORD")!;
  assert.deepEqual(password.valueFrom, {
    secretKeyRef: { name: "orders-credentials", key: "password" },
  });
  assert.equal(password.value, undefined);
  assert.ok(!JSON.stringify(statefulSet).includes("s3cret"));
});

Deno.test("the Delete policy hands the volumes to the StatefulSet's deletion", () => {
  const { statefulSet } = renderDatabaseCluster(cluster({ deletionPolicy: "Delete" }));
  assert.equal(statefulSet.spec?.persistentVolumeClaimRetentionPolicy?.whenDeleted, "Delete");
});

Deno.test("mysql clusters use the mysql image, port, data path and root password variable", () => {
  const { statefulSet, clientService } = renderDatabaseCluster(
    cluster({ engine: "mysql", version: "8.4" }),
  );
  const container = statefulSet.spec!.template.spec!.containers[0]!;
  assert.equal(container.image, "docker.io/library/mysql:8.4");
  assert.equal(container.volumeMounts?.[0]?.mountPath, "/var/lib/mysql");
  assert.deepEqual(container.env?.map((variable) => variable.name), ["MYSQL_ROOT_PASSWORD"]);
  assert.equal(clientService.spec?.ports?.[0]?.port, 3306);
});

Deno.test("an image in the spec replaces the official one", () => {
  const { statefulSet } = renderDatabaseCluster(
    cluster({ image: "registry.local/postgres:17-edge" }),
  );
  assert.equal(
    statefulSet.spec!.template.spec!.containers[0]!.image,
    "registry.local/postgres:17-edge",
  );
});

Deno.test("the headless Service publishes not-ready pods and the client Service targets pod 0", () => {
  const { headlessService, clientService, statefulSet } = renderDatabaseCluster(cluster());
  const selector = statefulSet.spec!.selector.matchLabels!;
  assert.equal(headlessService.metadata?.name, "orders-headless");
  assert.deepEqual(headlessService.spec, {
    clusterIP: "None",
    publishNotReadyAddresses: true,
    selector,
    ports: [{ name: "db", port: 5432, targetPort: "db", protocol: "TCP" }],
  });
  assert.equal(clientService.metadata?.name, "orders");
  assert.equal(clientService.spec?.type, "ClusterIP");
  assert.deepEqual(clientService.spec?.selector, {
    ...selector,
    "statefulset.kubernetes.io/pod-name": "orders-0",
  });
  for (const service of [headlessService, clientService]) {
    assert.equal(service.metadata?.ownerReferences?.[0]?.uid, "uid-orders");
  }
});

Deno.test("renderCredentialsSecret holds the given password and a connection URI", () => {
  const secret = renderCredentialsSecret(cluster(), "Zx81aaaaaaaaaaaaaaaa");
  assert.equal(secret.metadata?.name, credentialsSecretName(cluster()));
  assert.equal(secret.metadata?.name, "orders-credentials");
  assert.equal(secret.metadata?.ownerReferences?.[0]?.controller, true);
  assert.equal(secret.type, "kubernetes.io/basic-auth");
  assert.equal(secret.immutable, true);
  assert.deepEqual(secret.stringData, {
    username: "postgres",
    password: "Zx81aaaaaaaaaaaaaaaa",
    host: "orders.shop.svc.cluster.local",
    port: "5432",
    uri: "postgresql://postgres:Zx81aaaaaaaaaaaaaaaa@orders.shop.svc.cluster.local:5432/postgres",
  });
  assert.throws(() => renderCredentialsSecret(cluster(), ""), {
    name: "TypeError",
    message: /password is empty/,
  });
});

Deno.test("generatePassword draws letters and digits of the asked length, differently each time", () => {
  const passwords = new Set(Array.from({ length: 50 }, () => generatePassword()));
  assert.equal(passwords.size, 50);
  for (const password of passwords) assert.match(password, /^[A-Za-z0-9]{32}$/);
  assert.match(generatePassword(64), /^[A-Za-z0-9]{64}$/);
  const characters = new Set([...Array.from({ length: 200 }, () => generatePassword()).join("")]);
  assert.equal(characters.size, 62);
  assert.throws(() => generatePassword(8), {
    name: "RangeError",
    message: "Cannot generate a password: 'length' must be an integer from 16 to 1024, got 8",
  });
});

Deno.test("databaseStatus starts in Creating and reports Secret name and endpoint", () => {
  const { status, transition } = databaseStatus(cluster(), undefined, NOW);
  assert.equal(transition, undefined);
  assert.equal(status.phase, "Creating");
  assert.equal(status.observedGeneration, 2);
  assert.equal(status.secretName, "orders-credentials");
  assert.equal(status.endpoint, "orders.shop.svc.cluster.local:5432");
  assert.equal(status.endpoint, databaseEndpoint(cluster()));
  const progressing = findCondition(status.conditions, "Progressing")!;
  assert.deepEqual([progressing.status, progressing.reason], ["True", "Creating"]);
});

Deno.test("databaseStatus advances the state machine and returns the transition for an Event", () => {
  const ready = databaseStatus(
    cluster({ replicas: 2 }, { status: { phase: "Creating" } }),
    statefulSet(2, 2),
    NOW,
  );
  assert.equal(ready.status.phase, "Ready");
  assert.deepEqual(ready.transition, {
    from: "Creating",
    to: "Ready",
    reason: "ClusterReady",
    message: "2 of 2 replicas ready",
  });
  assert.equal(findCondition(ready.status.conditions, "Ready")?.status, "True");
  const degraded = databaseStatus(
    cluster({ replicas: 2 }, { status: ready.status }),
    statefulSet(2, 1),
    NOW,
  );
  assert.equal(degraded.status.phase, "Degraded");
  assert.equal(degraded.transition?.reason, "ReplicasUnavailable");
  assert.equal(degraded.status.readyReplicas, 1);
  assert.equal(findCondition(degraded.status.conditions, "Degraded")?.status, "True");
  const steady = databaseStatus(
    cluster({ replicas: 2 }, { status: degraded.status }),
    statefulSet(2, 1),
    NOW,
  );
  assert.equal(steady.transition, undefined);
  assert.equal(steady.status.phase, "Degraded");
});

Deno.test("databaseStatus moves to Terminating once the cluster is being deleted", () => {
  const deleting = cluster({}, { status: { phase: "Ready" } });
  deleting.metadata.deletionTimestamp = "2025-03-01T11:59:00Z";
  const { status, transition } = databaseStatus(deleting, statefulSet(1, 1), NOW);
  assert.equal(status.phase, "Terminating");
  assert.equal(transition?.reason, "DeletionRequested");
  assert.equal(findCondition(status.conditions, "Ready")?.status, "False");
});

Deno.test("invalidDatabaseStatus keeps the lifecycle phase and sets InvalidSpec", () => {
  const message = 'spec.version: "9.6" is not a supported postgres version';
  const status = invalidDatabaseStatus(
    {
      kind: "DatabaseCluster",
      metadata: { name: "orders", generation: 3 },
      status: { phase: "Ready", readyReplicas: 1 },
    },
    message,
    NOW,
  );
  assert.equal(status.phase, "Ready");
  assert.equal(status.readyReplicas, 1);
  assert.equal(status.observedGeneration, 3);
  assert.equal(findCondition(status.conditions, "InvalidSpec")?.message, message);
  assert.equal(findCondition(status.conditions, "Ready")?.status, "False");
  assert.equal(invalidDatabaseStatus({ metadata: {} }, message, NOW).phase, "Creating");
});
