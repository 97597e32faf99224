/**
 * The manifests of an operator's webhooks, from their declarations: the
 * `ValidatingWebhookConfiguration` and `MutatingWebhookConfiguration` (one
 * entry per kind, named by `webhookName`), the Service that fronts the pod
 * in the cluster, the kustomize patch that points each converted CRD at
 * that Service, and the rules the operator needs to keep them working: get
 * and patch of exactly its configurations and converted CRDs (to inject its
 * CA bundle), and its certificate's Secret.
 *
 * What the caller must know:
 *
 * - In the cluster the configurations name the Service (`port: 443`, to the
 *   container's port `webhook`); for node mode the same configurations name
 *   `https://127.0.0.1:<port><path>`, the operator beside the node's API
 *   server. Neither carries a CA bundle: the operator injects its own at
 *   start, and a `kubectl apply` of these files leaves it in place.
 * - The rules ask for the object in the version the operator is typed for
 *   (`resource.version`, `matchPolicy: Equivalent`): the API server converts
 *   a request in another version before the webhook sees it.
 * - A namespaced kind's entries skip kube-system and the operator's own
 *   namespace, so that a webhook that is down (`failurePolicy: Fail`) never
 *   blocks what it needs to come back up.
 *
 * @example
 * ```ts
 * import { webhookConfigurations } from "./webhook_files.ts";
 * import { describeOperator } from "./operator.ts";
 * import { CONFIG_MAPS } from "../kube/mod.ts";
 * import { allowed } from "../runtime/webhook/spec.ts";
 * const operator = describeOperator({
 *   name: "mirror-operator",
 *   envPrefix: "MIRROR_",
 *   image: "ghcr.io/example/mirror-operator:0.1.0",
 *   controllers: [{ name: "mirror", resource: CONFIG_MAPS }],
 *   webhooks: { admission: [{ resource: CONFIG_MAPS, validate: () => allowed() }] },
 * });
 * webhookConfigurations(operator, "url")[0]?.metadata.name; // "mirror-operator-validating"
 * ```
 *
 * @module
 */
import type { Resource } from "../kube/mod.ts";
import {
  CUSTOM_RESOURCE_DEFINITIONS,
  MUTATING_WEBHOOK_CONFIGURATIONS,
  resourceName,
  VALIDATING_WEBHOOK_CONFIGURATIONS,
} from "../kube/mod.ts";
import type { RbacRule } from "../runtime/rbac/mod.ts";
import { webhookName, webhookObjectNames, webhookPaths } from "../runtime/webhook/spec.ts";
import { commentedYaml } from "./_commented_yaml.ts";
import type { Operator } from "./operator.ts";
import type { DeclaredAdmission } from "./webhook_declarations.ts";

const ADMISSION = "admissionregistration.k8s.io";

/** Where the webhook configurations are applied, by kind: `nodeGrant` applies them in node mode. */
export const WEBHOOK_CONFIGURATIONS: Readonly<Record<string, Resource>> = {
  ValidatingWebhookConfiguration: VALIDATING_WEBHOOK_CONFIGURATIONS,
  MutatingWebhookConfiguration: MUTATING_WEBHOOK_CONFIGURATIONS,
};

/** A manifest as the API server takes it. */
export type Manifest = {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels: Record<string, string> };
} & Record<string, unknown>;

/** How the API server reaches the webhook: through the Service, or at the node's loopback. */
export type WebhookReach = "service" | "url";

/** The client configuration of the webhook at `path`. */
function clientConfig(operator: Operator, reach: WebhookReach, path: string) {
  if (reach === "url") return { url: `https://127.0.0.1:${operator.webhooks!.port}${path}` };
  const { service } = webhookObjectNames(operator.name);
  return { service: { namespace: operator.namespace, name: service, path, port: 443 } };
}

/** One entry of a configuration: the kind's rules, its policy, its time limit, where it is. */
function entry(
  operator: Operator,
  reach: WebhookReach,
  kind: "validate" | "mutate",
  admission: DeclaredAdmission,
) {
  const { resource } = admission;
  const skipped = [...new Set(["kube-system", operator.namespace])];
  return {
    name: webhookName(kind, resource),
    admissionReviewVersions: ["v1"],
    clientConfig: clientConfig(operator, reach, webhookPaths[kind](resource)),
    rules: [{
      apiGroups: [resource.group],
      apiVersions: [resource.version],
      operations: [...(kind === "validate" ? admission.operations : admission.mutated)],
      resources: [resource.plural],
      scope: resource.namespaced === false ? "Cluster" : "Namespaced",
    }],
    matchPolicy: "Equivalent",
    ...(resource.namespaced !== false && {
      namespaceSelector: {
        matchExpressions: [
          { key: "kubernetes.io/metadata.name", operator: "NotIn", values: skipped },
        ],
      },
    }),
    ...(admission.matchConditions.length > 0 &&
      { matchConditions: admission.matchConditions.map((c) => ({ ...c })) }),
    failurePolicy: admission.failurePolicy,
    sideEffects: "None",
    timeoutSeconds: admission.timeoutSeconds,
  };
}

/**
 * The validating and the mutating configuration, each present when a
 * webhook validates (defaults); none for an operator without admission
 * webhooks.
 */
export function webhookConfigurations(operator: Operator, reach: WebhookReach): Manifest[] {
  const admission = operator.webhooks?.admission ?? [];
  const names = webhookObjectNames(operator.name);
  const labels = { "app.kubernetes.io/name": operator.name };
  const configuration = (kind: "validate" | "mutate") => {
    const entries = admission
      .filter((a) => kind === "validate" ? a.validates : a.defaults)
      .map((a) => entry(operator, reach, kind, a));
    if (entries.length === 0) return [];
    return [{
      apiVersion: `${ADMISSION}/v1`,
      kind: kind === "validate" ? "ValidatingWebhookConfiguration" : "MutatingWebhookConfiguration",
      metadata: { name: kind === "validate" ? names.validating : names.mutating, labels },
      webhooks: entries,
    }];
  };
  return [...configuration("mutate"), ...configuration("validate")];
}

/** The Service in front of the operator's pod: 443 to the container's port `webhook`. */
export function webhookService(operator: Operator): Manifest {
  const labels = { "app.kubernetes.io/name": operator.name };
  return {
    apiVersion: "v1",
    kind: "Service",
    metadata: {
      name: webhookObjectNames(operator.name).service,
      namespace: operator.namespace,
      labels,
    },
    spec: {
      selector: labels,
      ports: [{ name: "webhook", port: 443, targetPort: "webhook", protocol: "TCP" }],
    },
  };
}

/**
 * `webhooks.yaml`: in the cluster (`"service"`) the Service and the
 * configurations; for node mode (`"url"`) the configurations alone, or
 * nothing when there are none.
 */
export function webhooksYaml(operator: Operator, reach: WebhookReach): string | undefined {
  if (operator.webhooks === undefined) return undefined;
  const configurations = webhookConfigurations(operator, reach);
  const documents = [...(reach === "service" ? [webhookService(operator)] : []), ...configurations];
  if (documents.length === 0) return undefined;
  const { name } = operator;
  const generated = `Generated by \`deno task deploy\` from ${
    operator.notes.source ?? "scripts/deploy.ts"
  } and the webhooks it declares. Do not edit.`;
  const where = reach === "service"
    ? `through the Service ${webhookService(operator).metadata.name} (443 to the container's ` +
      `port ${operator.webhooks.port})`
    : `at https://127.0.0.1:${operator.webhooks.port}, the ${name} beside each node's API ` +
      `server (its own install applies this file in node mode)`;
  const header = [
    generated,
    `The API server calls ${name} ${where}. No caBundle is written here: ${name} issues its ` +
    `own CA and injects it at start, and applying this file again leaves it in place.`,
  ];
  return documents.map((document, i) =>
    commentedYaml(document, {
      header: i === 0 ? header : [],
      comments: comments(operator, document),
    })
  ).join("---\n");
}

/** The comments of one document: why each entry skips the namespaces it skips. */
function comments(operator: Operator, document: Manifest): Record<string, string[]> {
  if (!Array.isArray(document.webhooks)) {
    return { "spec.ports[0]": [`${operator.name}'s webhook server, TLS with its own CA.`] };
  }
  return Object.fromEntries(
    (document.webhooks as { name: string; namespaceSelector?: unknown }[]).flatMap((w, i) =>
      w.namespaceSelector === undefined ? [] : [[
        `webhooks[${i}].namespaceSelector`,
        [
          `Never kube-system nor ${operator.namespace}: a webhook that is down must not block ` +
          `what ${operator.name} needs to come back up.`,
        ],
      ]]
    ),
  );
}

/**
 * The kustomize patches that point each converted CRD at the Service in
 * place of the node's URL `defineKind` writes, so that the API server can
 * convert from the first apply and a second apply changes nothing.
 */
export function conversionPatches(operator: Operator): Record<string, unknown>[] {
  return (operator.webhooks?.conversions ?? []).map(({ resource }) => ({
    target: {
      group: CUSTOM_RESOURCE_DEFINITIONS.group,
      kind: CUSTOM_RESOURCE_DEFINITIONS.kind,
      name: resourceName(resource),
    },
    patch: JSON.stringify([{
      op: "replace",
      path: "/spec/conversion/webhook/clientConfig",
      value: clientConfig(operator, "service", webhookPaths.convert(resource)),
    }]),
  }));
}

/**
 * The cluster-scoped rules of the webhooks, each with its reason: get and
 * patch of the operator's own configurations and of the CRDs it converts,
 * by name, to inject its CA bundle where it differs.
 */
export function webhookClusterRules(operator: Operator): RbacRule[] {
  const rules: RbacRule[] = webhookConfigurations(operator, "service").map((configuration) => ({
    apiGroups: [ADMISSION],
    resources: [WEBHOOK_CONFIGURATIONS[configuration.kind]!.plural],
    resourceNames: [configuration.metadata.name],
    verbs: ["get", "patch"],
    clusterScoped: true,
    reason: `its own ${configuration.kind} ${configuration.metadata.name}, read and patched ` +
      "with its CA bundle where it differs",
  }));
  const crds = (operator.webhooks?.conversions ?? []).map(({ resource }) => resourceName(resource));
  if (crds.length > 0) {
    rules.push({
      apiGroups: [CUSTOM_RESOURCE_DEFINITIONS.group],
      resources: [CUSTOM_RESOURCE_DEFINITIONS.plural],
      resourceNames: crds,
      verbs: ["get", "patch"],
      clusterScoped: true,
      reason: "the CRDs it converts, read and patched with its conversion webhook's client " +
        "configuration and CA bundle where they differ",
    });
  }
  return rules;
}

/**
 * The rules of the webhook's certificate in the operator's namespace: create
 * Secrets (its own when absent; a create cannot be limited by name), get
 * and update its own by name (each rotation replaces it with the
 * resourceVersion read).
 */
export function webhookSecretRules(operator: Operator): RbacRule[] {
  if (operator.webhooks === undefined) return [];
  const { secret } = webhookObjectNames(operator.name);
  return [
    {
      apiGroups: [""],
      resources: ["secrets"],
      verbs: ["create"],
      reason: `creates the Secret ${secret} of its webhook's CA and certificate when absent; a ` +
        "create cannot be limited by name, which the object does not have yet",
    },
    {
      apiGroups: [""],
      resources: ["secrets"],
      resourceNames: [secret],
      verbs: ["get", "update"],
      reason: `the Secret ${secret}, read, then replaced at each rotation by an update that ` +
        "carries the resourceVersion read (a candidate that loses reads it again)",
    },
  ];
}
