/**
 * The generated operator's code, as `examples/greeting/` and
 * `examples/backup/` write theirs: the kind in two halves, `src/kind.ts` (its
 * `Resource` and type, what runs) and `src/schema.ts` (its zod schemas and
 * CRD, loaded at build time and by tests only, so that zod stays off the run
 * path as it does in kinglet's own operators), a controller whose child is a
 * pure function of the primary, `main.ts`, and the script that writes the CRD
 * as YAML for `kubectl apply`.
 *
 * @module
 */
import type { ProjectNames } from "./names.ts";

/** The identifier of the controller constant, e.g. `mirrorController`. */
export function controllerConst(names: ProjectNames): string {
  return `${names.kind[0]!.toLowerCase()}${names.kind.slice(1)}Controller`;
}

/** `src/kind.ts`: the kind at run time, its `Resource` and its type, with no zod loaded. */
export function kindTs(n: ProjectNames): string {
  return `/**
 * The ${n.kind} kind at run time: the \`Resource\` the controller and the
 * client address it by, and the type of its objects. The zod schemas and the
 * CRD are in \`schema.ts\`, which only \`deno task crds\` and the tests load:
 * the running operator never loads zod, as kinglet's own operators do not.
 *
 * @module
 */
import type { Resource } from "@kinglet/kinglet/kube";

export type { ${n.kind} } from "./schema.ts";

/** The \`${n.crdName}\` resource; \`schema.ts\` defines the kind by its names. */
export const ${n.resourceConst}: Resource = {
  group: "${n.group}",
  version: "${n.version}",
  plural: "${n.plural}",
  kind: "${n.kind}",
  namespaced: ${n.namespaced},
};
`;
}

/** The spec field of a cluster-scoped kind that names where its ConfigMap goes. */
const NAMESPACE_FIELD = `    namespace: z.string().regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/).max(63)
      .describe("The namespace the ConfigMap goes into."),
`;

/** `src/schema.ts`: the kind's CRD and type from one `defineKind`, named by `src/kind.ts`. */
export function schemaTs(n: ProjectNames): string {
  const resource = n.resourceConst;
  return `/**
 * The ${n.kind} kind, \`${n.crdName}\`: a ${n.kind} holds a message that its
 * operator writes into a ConfigMap. Its CRD and the type of its objects come
 * from these zod schemas, its names from the \`Resource\` in \`kind.ts\`.
 *
 * Loaded at build time only (\`deno task crds\` writes the CRD to \`crds/\`)
 * and by the tests: the operator imports \`kind.ts\`, so zod stays off its
 * run path.
 *
 * @module
 */
import { z } from "zod";
import { conditionsSchema, type CustomObject, defineKind } from "@kinglet/kinglet/crd";
import { ${resource} } from "./kind.ts";

/** The ${n.kind} kind: its CRD and its schemas. */
export const ${n.kindConst} = defineKind({
  group: ${resource}.group,
  version: ${resource}.version,
  kind: ${resource}.kind,
  plural: ${resource}.plural,
${
    n.namespaced
      ? ""
      : '  scope: "Cluster", // as kind.ts says: namespaced: false\n'
  }  description: "${n.kind} writes its message into a ConfigMap.",
  spec: z.object({
    message: z.string().min(1).describe("What the ConfigMap says."),
${n.namespaced ? "" : NAMESPACE_FIELD}  }),
  status: z.object({
    observedGeneration: z.int().optional().describe("The generation the status is for."),
    configMap: z.string().optional().describe("The ConfigMap's name."),
    conditions: conditionsSchema("Ready: whether the ConfigMap says what the spec says."),
  }),
  printerColumns: [
    { name: "Message", type: "string", jsonPath: ".spec.message" },
    { name: "Ready", type: "string", jsonPath: '.status.conditions[?(@.type=="Ready")].status' },
    { name: "Age", type: "date", jsonPath: ".metadata.creationTimestamp" },
  ],
});

/** A ${n.kind} as the API server returns it. */
export type ${n.kind} = CustomObject<typeof ${n.kindConst}>;
`;
}

/** `src/controller.ts`: the pure render function and the `ControllerSpec`. */
export function controllerTs(n: ProjectNames): string {
  const object = n.objectVar;
  const controller = controllerConst(n);
  return `/**
 * The ${n.kind} operator: a ${n.kind}'s controller writes the ConfigMap that
 * holds its message (a child it owns, repaired when changed or deleted) and
 * says in a \`Ready\` condition that it did.
 *
 * @module
 */
import { CONFIG_MAPS, type KubeObject } from "@kinglet/kinglet/kube";
import { controllerReference, type ControllerSpec, setCondition } from "@kinglet/kinglet/runtime";
import { type ${n.kind}, ${n.resourceConst} } from "./kind.ts";

/** The controller's name: in logs and metrics, its field manager, and its children's label. */
export const OPERATOR = "${n.operator}";

/** The label on every ConfigMap the operator writes, which its cache selects by. */
export const MANAGED_BY = "app.kubernetes.io/managed-by";

/** A ConfigMap with a name and data. */
export type ConfigMap = KubeObject & { metadata: { name: string }; data: Record<string, string> };

/** The ConfigMap a ${n.kind} renders: a pure function of the ${n.kind}. */
export function renderConfigMap(${object}: ${n.kind}): ConfigMap {
${
    n.namespaced
      ? `  const { name, namespace } = ${object}.metadata;`
      : `  const { metadata: { name }, spec: { namespace } } = ${object};`
  }
  return {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: {
      name: \`\${name}-${n.childSuffix}\`,
      namespace,
      labels: { [MANAGED_BY]: OPERATOR },
      // A controller reference: its changes reconcile the ${n.kind}, and it goes with it.
      ownerReferences: [controllerReference(${object})],
    },
    data: { message: ${object}.spec.message },
  };
}

/** The controller of ${n.kind} objects. */
export const ${controller}: ControllerSpec<${n.kind}> = {
  name: OPERATOR,
  resource: ${n.resourceConst},
  // Only the ConfigMaps it labelled are cached, not every one in the cluster.
  owns: [{ resource: CONFIG_MAPS, labelSelector: \`\${MANAGED_BY}=\${OPERATOR}\` }],
  async reconcile(${object}, { children, clock, signal, status }) {
    const desired = renderConfigMap(${object});
    // Skips the write when the cached ConfigMap is as this controller last applied it.
    const { metadata: { name } } = await children.apply(CONFIG_MAPS, desired, signal);
    const ready = { type: "Ready", status: "True", reason: "Rendered" } as const;
    const message = \`ConfigMap \${name} holds the message\`;
    const { metadata: { generation }, status: observed } = ${object};
    // lastTransitionTime moves only when the status does, read from the controller's clock.
    const conditions = setCondition(observed?.conditions, { ...ready, message }, clock);
    // Written only when it differs from the ${n.kind}'s status, whatever the key order.
    await status({ observedGeneration: generation, configMap: name, conditions });
    return {}; // done until the ${n.kind} or its ConfigMap changes
  },
};
`;
}

/** `main.ts`: the Manager with the controller, until SIGINT or SIGTERM; the CRD is applied first. */
export function mainTs(n: ProjectNames): string {
  return `/**
 * Runs the ${n.kind} operator until SIGINT or SIGTERM (\`deno task start\`).
 *
 * Apply its CRD first (\`deno task crds\`, then \`kubectl apply -f crds/\`;
 * deployed, deploy/kustomization.yaml applies it): the operator never installs
 * it, so that its run path loads no zod, and its least-privilege RBAC holds no
 * right to. It takes the flags \`kinglet run\` takes to connect, log and keep a
 * memory limit (\`--help\` lists them): \`--kubeconfig\` and \`--context\`,
 * else it connects as kubectl would (\`KUBECONFIG\`, in-cluster,
 * \`~/.kube/config\`); each flag is also set by its variable under the prefix
 * of src/operator.ts. It serves \`/healthz\` and \`/readyz\` on
 * \`HEALTH_ADDRESS\` (default \`127.0.0.1:8081\`) and \`/metrics\` on
 * \`METRICS_ADDRESS\` (default \`127.0.0.1:8080\`).
 *
 * Deployed (deploy/'s Deployment and systemd unit pass \`--leader-elect\`), it
 * campaigns for the Lease of src/operator.ts and keeps under the memory limit
 * of \`--memory-limit\`. \`install --kubeconfig <admin> --node-kubeconfig <path>\`
 * applies its RBAC and writes a kubeconfig of the operator's own
 * ServiceAccount (deploy/systemd/'s credentials service runs it). A bad flag
 * or variable exits 2, which the units do not restart on; a failure, 1.
 *
 * @module
 */
import { exitOnError, operatorFlags } from "@kinglet/kinglet/cli";
import { Manager, setupLogging } from "@kinglet/kinglet/runtime";
import { ${controllerConst(n)} } from "./src/controller.ts";
import { operator } from "./src/operator.ts";

if (Deno.args[0] === "install") {
  // deploy/systemd/'s credentials service: this operator's own kubeconfig, from the admin's.
  const { runNodeInstall } = await import("@kinglet/kinglet/deploy");
  const args = Deno.args.slice(1);
  Deno.exit(await runNodeInstall(operator, args).catch((error) => exitOnError(operator, error)));
}
const flags = operatorFlags(operator); // --help prints the flags; a bad one is said, exit 2
setupLogging(flags.logging); // a failing reconcile is logged, not only counted
const manager = new Manager({
  reportingController: "${n.group}/${n.operator}",
  connection: flags.connection,
  metricsAddress: Deno.env.get("METRICS_ADDRESS"),
  healthAddress: Deno.env.get("HEALTH_ADDRESS"),
  memoryLimit: flags.memoryLimit,
  ...(flags.leaderElect && {
    leaderElection: { namespace: operator.namespace, name: operator.leaseName },
  }),
});
manager.add(${controllerConst(n)});
// Until SIGINT or SIGTERM: drains, flushes the Events. A lost Lease exits 1, to campaign again.
const outcome = await manager.run().catch((error) => exitOnError(operator, error));
Deno.exit(outcome === "stopped" ? 0 : 1);
`;
}

/** `scripts/crds.ts`: writes the CRD as YAML from the schema (\`deno task crds\`). */
export function crdsScriptTs(n: ProjectNames): string {
  return `/**
 * Writes \`crds/${n.crdName}.yaml\` from the zod schema in \`src/schema.ts\`
 * (\`deno task crds\`), for manifests that install the CRD ahead of the operator.
 *
 * @module
 */
import { stringify } from "yaml";
import { withSchemaHash } from "@kinglet/kinglet/crd";
import { ${n.kindConst} } from "../src/schema.ts";

const crd = withSchemaHash(${n.kindConst}.crd());
const dir = new URL("../crds/", import.meta.url);
await Deno.mkdir(dir, { recursive: true });
const header = "# Generated by \`deno task crds\` from src/schema.ts. Do not edit.\\n";
await Deno.writeTextFile(new URL(\`\${crd.metadata.name}.yaml\`, dir), header + stringify(crd));
`;
}
