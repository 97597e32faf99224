/**
 * What the deploy files read of an operator's webhooks: the declarations of
 * its admission webhooks (the kind, the operations, the failure policy, the
 * time limit, the CEL match conditions, and whether it validates, defaults
 * or both) and of its conversions (the kind and its hub), never their
 * functions, which are not called. {@link describeWebhooks} checks them all
 * at once and fills in their defaults, as `describeOperator` does for the
 * rest of the description.
 *
 * @example
 * ```ts
 * import { describeWebhooks } from "./webhook_declarations.ts";
 * import { allowed } from "../runtime/webhook/spec.ts";
 * const resource = {
 *   group: "example.dev", version: "v1", plural: "mirrors", kind: "Mirror", namespaced: true,
 * };
 * const webhooks = describeWebhooks(
 *   { admission: [{ resource, validate: () => allowed() }] },
 *   [{ name: "health", port: 8081 }],
 *   (what) => {
 *     throw new TypeError(what);
 *   },
 * );
 * webhooks?.admission[0]?.operations; // ["CREATE", "UPDATE"]
 * webhooks?.port; // 9443
 * ```
 *
 * @module
 */
import type { Resource } from "../kube/mod.ts";
import {
  type AdmissionWebhook,
  type Conversion,
  DEFAULT_WEBHOOK_PORT,
  type FailurePolicy,
  type Operation,
} from "../runtime/webhook/spec.ts";

/**
 * The webhooks an operator serves, as its deploy files need them: an
 * `AdmissionWebhook` or a `Conversion` of `@kinglet/kinglet/runtime/webhook`
 * of any kind is one.
 */
export interface DeployedWebhooks {
  /** Validation and defaulting, one entry per kind. @default none */
  admission?: readonly AdmissionWebhook[];
  /** Conversions between the versions of a kind, one per kind. @default none */
  conversions?: readonly Conversion[];
  /** The port the webhook server listens on. @default 9443 (`DEFAULT_WEBHOOK_PORT`) */
  port?: number;
}

/** One admission webhook's declarations, its defaults filled in. */
export interface DeclaredAdmission {
  /** The kind it admits. */
  resource: Resource;
  /** Whether it validates (a `ValidatingWebhookConfiguration` entry). */
  validates: boolean;
  /** Whether it defaults (a `MutatingWebhookConfiguration` entry). */
  defaults: boolean;
  /** The operations validated. */
  operations: readonly Operation[];
  /** The operations defaulted: the validated ones but DELETE, which has no object to default. */
  mutated: readonly Operation[];
  /** What the API server does when the webhook fails. */
  failurePolicy: FailurePolicy;
  /** How long the API server waits, in seconds. */
  timeoutSeconds: number;
  /** The CEL conditions a request must meet to be sent; none for every request. */
  matchConditions: readonly { name: string; expression: string }[];
}

/** The webhooks, checked, with their defaults. */
export interface OperatorWebhooks {
  /** The admission webhooks, in the order declared. */
  admission: readonly DeclaredAdmission[];
  /** The conversions, in the order declared. */
  conversions: readonly Conversion[];
  /** The port of the webhook server. */
  port: number;
}

const OPERATIONS: readonly Operation[] = ["CREATE", "UPDATE", "DELETE"];

/**
 * `webhooks` checked and completed; `undefined` when it declares none.
 * `ports` are the container's other ports, which the webhook's must not be.
 * Reads `validate` and `default` only to see whether they are there.
 *
 * @throws what `refuse` throws, naming the field: a webhook without a kind,
 * or that neither validates nor defaults, an unknown operation or failure
 * policy, a time limit outside 1 to 30 seconds, a match condition without a
 * name or expression, a kind declared twice, a port taken or out of range.
 */
export function describeWebhooks(
  webhooks: DeployedWebhooks | undefined,
  ports: readonly { name: string; port: number }[],
  refuse: (what: string) => never,
): OperatorWebhooks | undefined {
  const admission = webhooks?.admission ?? [];
  const conversions = webhooks?.conversions ?? [];
  if (admission.length === 0 && conversions.length === 0) return undefined;
  const seen = new Set<string>();
  const kind = (resource: Resource | undefined, field: string) => {
    if (
      typeof resource?.plural !== "string" || resource.plural === "" ||
      typeof resource.group !== "string" || typeof resource.kind !== "string"
    ) {
      refuse(`'${field}.resource' is no resource with a group, a plural and a kind`);
    }
    const key = `${field.split("[")[0]} ${resource!.plural}.${resource!.group}`;
    if (seen.has(key)) refuse(`'${field}' declares ${resource!.plural} a second time`);
    seen.add(key);
  };
  const declared = admission.map((webhook, i): DeclaredAdmission => {
    const at = `webhooks.admission[${i}]`;
    kind(webhook?.resource, at);
    const validates = typeof webhook.validate === "function";
    const defaults = typeof webhook.default === "function";
    if (!validates && !defaults) refuse(`'${at}' has neither 'validate' nor 'default'`);
    const operations = webhook.operations ?? ["CREATE", "UPDATE"];
    if (operations.length === 0 || operations.some((op) => !OPERATIONS.includes(op))) {
      refuse(`'${at}.operations' ${JSON.stringify(operations)} are not CREATE, UPDATE or DELETE`);
    }
    const mutated = operations.filter((op) => op !== "DELETE");
    if (defaults && mutated.length === 0) {
      refuse(`'${at}.operations' leave 'default' nothing to default: add CREATE or UPDATE`);
    }
    const failurePolicy = webhook.failurePolicy ?? "Fail";
    if (failurePolicy !== "Fail" && failurePolicy !== "Ignore") {
      refuse(`'${at}.failurePolicy' ${JSON.stringify(failurePolicy)} is not Fail or Ignore`);
    }
    const timeoutSeconds = webhook.timeoutSeconds ?? 10;
    if (!Number.isInteger(timeoutSeconds) || timeoutSeconds < 1 || timeoutSeconds > 30) {
      refuse(`'${at}.timeoutSeconds' ${timeoutSeconds} is not a whole number from 1 to 30`);
    }
    const matchConditions = webhook.matchConditions ?? [];
    matchConditions.forEach((condition, j) => {
      if (!condition?.name || !condition.expression) {
        refuse(`'${at}.matchConditions[${j}]' needs a 'name' and a CEL 'expression'`);
      }
    });
    return {
      resource: webhook.resource,
      validates,
      defaults,
      operations: [...operations],
      mutated,
      failurePolicy,
      timeoutSeconds,
      matchConditions: matchConditions.map(({ name, expression }) => ({ name, expression })),
    };
  });
  conversions.forEach((conversion, i) => {
    kind(conversion?.resource, `webhooks.conversions[${i}]`);
    if (typeof conversion.hub !== "string" || conversion.hub === "") {
      refuse(
        `'webhooks.conversions[${i}].hub' is missing: name the version others convert through`,
      );
    }
  });
  const port = webhooks?.port ?? DEFAULT_WEBHOOK_PORT;
  if (!Number.isInteger(port) || port < 1 || port > 65535) {
    refuse(`'webhooks.port' ${port} is not a port from 1 to 65535`);
  }
  const taken = ports.find((other) => other.port === port || other.name === "webhook");
  if (taken) {
    refuse(
      `'webhooks.port' ${port} clashes with the port ${taken.name} (${taken.port}): the ` +
        "webhook's port is named webhook and has a number of its own",
    );
  }
  return { admission: declared, conversions: [...conversions], port };
}
