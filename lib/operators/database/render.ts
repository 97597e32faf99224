/**
 * The children a DatabaseCluster wants, for server-side apply:
 *
 * - a StatefulSet `<name>` with one volume per pod from the claim template
 *   `data`, its claims kept or deleted with it per `spec.deletionPolicy`;
 * - a headless Service `<name>-headless` (the StatefulSet's governing
 *   Service, publishing not-ready pods so peers find each other while
 *   starting);
 * - a client Service `<name>` routing to the first pod, `<name>-0`;
 * - a credentials Secret `<name>-credentials` (type `kubernetes.io/basic-auth`,
 *   immutable) with `username`, `password`, `host`, `port` and `uri`.
 *
 * The Secret is rendered separately because it is created once, when
 * absent, and never applied again: the engine reads the password only when
 * it initializes the data directory, so a new password would lock everyone
 * out. The password is an argument, keeping rendering pure; see
 * `generatePassword`. Pods read it through `secretKeyRef`, so it never
 * appears in a pod spec.
 *
 * @example
 * ```ts
 * import { renderDatabaseCluster } from "./render.ts";
 * const { statefulSet, headlessService } = renderDatabaseCluster({
 *   apiVersion: "kinglet.dev/v1alpha2",
 *   kind: "DatabaseCluster",
 *   metadata: { name: "orders", namespace: "shop", uid: "0b9e…" },
 *   spec: {
 *     engine: "postgres", version: "17", replicas: 1,
 *     storage: { size: "10Gi" }, deletionPolicy: "Retain",
 *   },
 * });
 * statefulSet.spec?.serviceName; // "orders-headless"
 * headlessService.spec?.clusterIP; // "None"
 * ```
 *
 * @module
 */
import type { V1Secret, V1Service, V1StatefulSet } from "../models.ts";
import { childMetadata, recommendedLabels, selectorLabels, serviceHost } from "../labels.ts";
import { containerResources } from "../pod_fields.ts";
import { quantityString } from "../quantity.ts";
import { engineImage, ENGINES } from "./engines.ts";
import type { DatabaseCluster } from "./kind.ts";

/** The name of the database container in each pod. */
export const DATABASE_CONTAINER = "database";

/** The name of the volume claim template, and so the prefix of each PVC. */
export const DATA_VOLUME = "data";

/** The label the StatefulSet controller puts on each pod with the pod's name. */
const POD_NAME_LABEL = "statefulset.kubernetes.io/pod-name";

/** The desired children of a DatabaseCluster, except the credentials Secret. */
export interface DatabaseChildren {
  statefulSet: V1StatefulSet;
  headlessService: V1Service;
  clientService: V1Service;
}

/**
 * Renders the StatefulSet and both Services of a DatabaseCluster.
 *
 * @throws {TypeError} when the cluster lacks `metadata.uid` or
 * `metadata.namespace` (see `childMetadata`).
 * @example
 * ```ts
 * import { renderDatabaseCluster } from "./render.ts";
 * renderDatabaseCluster({
 *   apiVersion: "kinglet.dev/v1alpha2",
 *   kind: "DatabaseCluster",
 *   metadata: { name: "orders", namespace: "shop", uid: "0b9e…" },
 *   spec: {
 *     engine: "mysql", version: "8.4", replicas: 1,
 *     storage: { size: "5Gi" }, deletionPolicy: "Delete",
 *   },
 * }).clientService.spec?.ports?.[0]?.port; // 3306
 * ```
 */
export function renderDatabaseCluster(cluster: DatabaseCluster): DatabaseChildren {
  const { spec } = cluster;
  const engine = ENGINES[spec.engine];
  const selector = selectorLabels(cluster);
  const headless = childMetadata(cluster, "-headless");
  const client = childMetadata(cluster);
  const resources = containerResources(spec.resources);
  const ports = [{ name: "db", port: engine.port, targetPort: "db", protocol: "TCP" }];
  const statefulSet: V1StatefulSet = {
    apiVersion: "apps/v1",
    kind: "StatefulSet",
    metadata: childMetadata(cluster),
    spec: {
      serviceName: headless.name,
      replicas: spec.replicas,
      selector: { matchLabels: selector },
      persistentVolumeClaimRetentionPolicy: {
        whenDeleted: spec.deletionPolicy,
        whenScaled: "Retain",
      },
      template: {
        metadata: { labels: recommendedLabels(cluster) },
        spec: {
          containers: [{
            name: DATABASE_CONTAINER,
            image: spec.image ?? engineImage(spec.engine, spec.version),
            ports: [{ name: "db", containerPort: engine.port, protocol: "TCP" }],
            env: engine.env(credentialsSecretName(cluster)),
            ...(Object.keys(resources).length ? { resources } : {}),
            volumeMounts: [{ name: DATA_VOLUME, mountPath: engine.dataPath }],
            readinessProbe: engine.readinessProbe,
          }],
        },
      },
      volumeClaimTemplates: [{
        metadata: { name: DATA_VOLUME, labels: recommendedLabels(cluster) },
        spec: {
          accessModes: ["ReadWriteOnce"],
          resources: { requests: { storage: quantityString(spec.storage.size) } },
          ...(spec.storage.className ? { storageClassName: spec.storage.className } : {}),
        },
      }],
    },
  };
  const headlessService: V1Service = {
    apiVersion: "v1",
    kind: "Service",
    metadata: headless,
    spec: { clusterIP: "None", publishNotReadyAddresses: true, selector, ports },
  };
  const clientService: V1Service = {
    apiVersion: "v1",
    kind: "Service",
    metadata: client,
    spec: {
      type: "ClusterIP",
      selector: { ...selector, [POD_NAME_LABEL]: `${client.name}-0` },
      ports,
    },
  };
  return { statefulSet, headlessService, clientService };
}

/**
 * Renders the credentials Secret. Create it only when it does not exist;
 * never apply it over an existing one.
 *
 * @throws {TypeError} when `password` is empty, or as {@link renderDatabaseCluster}.
 * @example
 * ```ts
 * import { renderCredentialsSecret } from "./render.ts";
 * const secret = renderCredentialsSecret({
 *   apiVersion: "kinglet.dev/v1alpha2",
 *   kind: "DatabaseCluster",
 *   metadata: { name: "orders", namespace: "shop", uid: "0b9e…" },
 *   spec: {
 *     engine: "postgres", version: "17", replicas: 1,
 *     storage: { size: "10Gi" }, deletionPolicy: "Retain",
 *   },
 * }, "s3cretS3cretS3cret");
 * secret.stringData?.uri; // "postgresql://postgres:s3cretS3cretS3cret@orders.shop.svc.cluster.local:5432/postgres"
 * ```
 */
export function renderCredentialsSecret(cluster: DatabaseCluster, password: string): V1Secret {
  if (password === "") {
    throw new TypeError(
      `Cannot render the credentials of DatabaseCluster ${cluster.metadata.name}: the password is empty`,
    );
  }
  const engine = ENGINES[cluster.spec.engine];
  const host = serviceHost(cluster);
  const user = encodeURIComponent(engine.username);
  const secret = encodeURIComponent(password);
  const uri = cluster.spec.engine === "postgres"
    ? `postgresql://${user}:${secret}@${host}:${engine.port}/postgres`
    : `mysql://${user}:${secret}@${host}:${engine.port}`;
  return {
    apiVersion: "v1",
    kind: "Secret",
    metadata: childMetadata(cluster, "-credentials"),
    type: "kubernetes.io/basic-auth",
    immutable: true,
    stringData: {
      username: engine.username,
      password,
      host,
      port: String(engine.port),
      uri,
    },
  };
}

/**
 * The name of a cluster's credentials Secret, `<name>-credentials`.
 *
 * @example
 * ```ts
 * import { credentialsSecretName } from "./render.ts";
 * credentialsSecretName({ metadata: { name: "orders" } }); // "orders-credentials"
 * ```
 */
export function credentialsSecretName(cluster: Pick<DatabaseCluster, "metadata">): string {
  return `${cluster.metadata.name}-credentials`;
}

/**
 * The client Service's DNS name and port, as status reports it.
 *
 * @example
 * ```ts
 * import { databaseEndpoint } from "./render.ts";
 * databaseEndpoint({
 *   metadata: { name: "orders", namespace: "shop" },
 *   spec: { engine: "mysql", version: "8.4", replicas: 1, storage: { size: "1Gi" }, deletionPolicy: "Retain" },
 * }); // "orders.shop.svc.cluster.local:3306"
 * ```
 */
export function databaseEndpoint(cluster: Pick<DatabaseCluster, "metadata" | "spec">): string {
  return `${serviceHost(cluster)}:${ENGINES[cluster.spec.engine].port}`;
}
