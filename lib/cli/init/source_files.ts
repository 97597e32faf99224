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
import { fit, importLine } from "./_format.ts";
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

${
    fit(
      `export type { ${n.kind} } from "./schema.ts";`,
      `export type {\n  ${n.kind},\n} from "./schema.ts";`,
    )
  }

/** The \`${n.crdName}\` resource; \`schema.ts\` defines the kind by its names. */
export const ${n.resourceConst}: Resource = {
  group: "${n.group}",
  version: "${n.version}",
  plural: "${n.plural}",
  kind: "${n.kind}",
  namespaced: true,
};
`;
}

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
${importLine([resource], "./kind.ts")}

/** The ${n.kind} kind: its CRD and its schemas. */
export const ${n.kindConst} = defineKind({
  group: ${resource}.group,
  version: ${resource}.version,
  kind: ${resource}.kind,
  plural: ${resource}.plural,
${
    fit(
      `  description: "${n.kind} writes its message into a ConfigMap.",`,
      `  description:\n    "${n.kind} writes its message into a ConfigMap.",`,
    )
  }
  spec: z.object({
    message: z.string().min(1).describe("What the ConfigMap says."),
  }),
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
${
    fit(
      `export type ${n.kind} = CustomObject<typeof ${n.kindConst}>;`,
      `export type ${n.kind} = CustomObject<\n  typeof ${n.kindConst}\n>;`,
    )
  }
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
${importLine([`type ${n.kind}`, n.resourceConst], "./kind.ts")}

/** The controller's name: in logs and metrics, its field manager, and its children's label. */
export const OPERATOR = "${n.operator}";

/** The label on every ConfigMap the operator writes, which its cache selects by. */
export const MANAGED_BY = "app.kubernetes.io/managed-by";

/** A ConfigMap with a name and data. */
export type ConfigMap = KubeObject & { metadata: { name: string }; data: Record<string, string> };

/** The ConfigMap a ${n.kind} renders: a pure function of the ${n.kind}. */
${
    fit(
      `export function renderConfigMap(${object}: ${n.kind}): ConfigMap {`,
      `export function renderConfigMap(\n  ${object}: ${n.kind},\n): ConfigMap {`,
    )
  }
  const { name, namespace } = ${object}.metadata;
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
${
    fit(
      `export const ${controller}: ControllerSpec<${n.kind}> = {`,
      `export const ${controller}: ControllerSpec<\n  ${n.kind}\n> = {`,
    )
  }
  name: OPERATOR,
  resource: ${n.resourceConst},
  // Only the ConfigMaps it labelled are cached, not every one in the cluster.
  owns: [{ resource: CONFIG_MAPS, labelSelector: \`\${MANAGED_BY}=\${OPERATOR}\` }],
${
    fit(
      `  async reconcile(${object}, { children, clock, signal, status }) {`,
      `  async reconcile(\n    ${object},\n    { children, clock, signal, status },\n  ) {`,
    )
  }
    const desired = renderConfigMap(${object});
    // Skips the write when the cached ConfigMap is as this controller last applied it.
    const { metadata: { name } } = await children.apply(CONFIG_MAPS, desired, signal);
    const ready = { type: "Ready", status: "True", reason: "Rendered" } as const;
    const message = \`ConfigMap \${name} holds the message\`;
${
    fit(
      `    const { metadata: { generation }, status: observed } = ${object};`,
      `    const { metadata: { generation }, status: observed } =\n      ${object};`,
    )
  }
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
 * right to. It connects as kubectl would (\`KUBECONFIG\`, in-cluster,
 * \`~/.kube/config\`) and serves \`/healthz\` and \`/readyz\` on
 * \`HEALTH_ADDRESS\` (default \`127.0.0.1:8081\`) and \`/metrics\` on
 * \`METRICS_ADDRESS\` (default \`127.0.0.1:8080\`).
 *
 * Deployed (deploy/'s Deployment and systemd unit pass \`--leader-elect\`), it
 * campaigns for the Lease of src/operator.ts and keeps under the memory limit
 * in \`<envPrefix>MEMORY_LIMIT\`. \`install --kubeconfig <admin>
 * --node-kubeconfig <path>\` applies its RBAC and writes a kubeconfig of the
 * operator's own ServiceAccount (deploy/systemd/'s credentials service runs it).
 *
 * @module
 */
import { Manager, setupLogging } from "@kinglet/kinglet/runtime";
import { ${controllerConst(n)} } from "./src/controller.ts";
import { operator } from "./src/operator.ts";

/** Bytes in the unit of a quantity the Deployment (bytes) or the unit (\`128Mi\`) sets. */
const UNITS: Record<string, number> = { "": 1, Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30 };

/** The memory limit in \`variable\`, in bytes; none when it is unset. */
function memoryLimit(variable: string): number | undefined {
  const value = Deno.env.get(variable)?.trim();
  if (!value) return undefined;
  const match = /^([1-9][0-9]*)(Ki|Mi|Gi)?$/.exec(value);
  if (!match) throw new RangeError(\`\${variable} must be bytes or 128Mi, 1Gi, got \${value}\`);
  return Number(match[1]) * UNITS[match[2] ?? ""]!;
}

if (Deno.args[0] === "install") {
  // deploy/systemd/'s credentials service: this operator's own kubeconfig, from the admin's.
  const { runNodeInstall } = await import("@kinglet/kinglet/deploy");
  Deno.exit(await runNodeInstall(operator, Deno.args.slice(1)));
}
const deployed = Deno.args.includes("--leader-elect");
setupLogging({ level: "info" }); // a failing reconcile is logged, not only counted
const manager = new Manager({
  reportingController: "${n.group}/${n.operator}",
  metricsAddress: Deno.env.get("METRICS_ADDRESS"),
  healthAddress: Deno.env.get("HEALTH_ADDRESS"),
  memoryLimit: memoryLimit(\`\${operator.envPrefix}MEMORY_LIMIT\`),
  ...(deployed && {
    leaderElection: { namespace: operator.namespace, name: operator.leaseName },
  }),
});
manager.add(${controllerConst(n)});
await manager.run(); // until SIGINT or SIGTERM; drains, then flushes the Events
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
