/**
 * The webhook floor: the least operator built on kinglet's Manager, with or
 * without one admission webhook, so that the harness measures what serving
 * a webhook adds and nothing else (`--target manager-floor,webhook-floor`).
 *
 * Both targets run this one program: a Manager with one controller of
 * WebApps whose reconcile writes nothing, its `/metrics`, `/healthz` and
 * `/readyz` on the two ports the harness gives it. Given
 * `--webhook-bind-address`, the Manager also serves one validating webhook of
 * WebApps (`spec.port` must be a port) over HTTPS on that address, keeps its
 * CA and serving certificate in the Secret `webhook-floor-webhook-tls` of
 * `--namespace`, and injects its CA into the configuration
 * `webhook-floor-validating` (bench/targets/webhook-floor.yaml, applied by
 * the harness before it starts). Without the flag the webhook server is
 * never loaded: the Manager imports it only when a webhook was added.
 *
 *   deno run -A bench/targets/webhook_floor.ts --kubeconfig=<file> \
 *     --metrics-bind-address=127.0.0.1:8080 --health-probe-bind-address=127.0.0.1:8081 \
 *     [--webhook-bind-address=127.0.0.1:9443 --namespace=bench]
 *
 * @module
 */
// deno-lint-ignore-file no-console -- a terminal program
import type { Resource } from "../../lib/kube/types.ts";
import { Manager } from "../../lib/runtime/manager/mod.ts";
import { type AdmissionWebhook, allowed, denied } from "../../lib/runtime/webhook/spec.ts";

/** The operator's name: it names the webhook configuration and the certificates' Secret. */
export const WEBHOOK_FLOOR_OPERATOR = "webhook-floor";

/** The kind the controller watches and the webhook admits. */
export const WEBAPPS: Resource = {
  group: "kinglet.dev",
  version: "v1alpha1",
  plural: "webapps",
  kind: "WebApp",
  namespaced: true,
};

/** Allows a WebApp whose `spec.port` is absent or a port; the check costs next to nothing. */
export const webAppAdmission: AdmissionWebhook = {
  resource: WEBAPPS,
  validate({ object }) {
    const port = (object?.spec as { port?: unknown } | undefined)?.port;
    if (
      port === undefined || (Number.isInteger(port) && Number(port) >= 1 && Number(port) <= 65535)
    ) {
      return allowed();
    }
    return denied(`spec.port must be a port from 1 to 65535, got ${JSON.stringify(port)}`);
  },
};

/** The program's command line. */
export interface WebhookFloorOptions {
  kubeconfig: string;
  metrics: string;
  probes: string;
  /** With a webhook: where it listens, and the namespace of its certificates' Secret. */
  webhook?: { address: string; namespace: string };
}

const FLAGS = [
  "kubeconfig",
  "metrics-bind-address",
  "health-probe-bind-address",
  "webhook-bind-address",
  "namespace",
];

/**
 * Reads `--name=value` arguments.
 *
 * @throws {TypeError} naming the argument that is missing or unknown, or
 * `--webhook-bind-address` given without `--namespace`.
 */
export function parseWebhookFloorArgs(args: readonly string[]): WebhookFloorOptions {
  const values = new Map<string, string>();
  for (const arg of args) {
    const match = /^--([a-z-]+)=(.+)$/.exec(arg);
    if (!match) {
      throw new TypeError(`webhook-floor: expected --name=value, got ${JSON.stringify(arg)}`);
    }
    if (!FLAGS.includes(match[1]!)) {
      throw new TypeError(`webhook-floor: unknown flag --${match[1]} (known: ${FLAGS.join(", ")})`);
    }
    values.set(match[1]!, match[2]!);
  }
  const required = (name: string): string => {
    const value = values.get(name);
    if (value === undefined) throw new TypeError(`webhook-floor: --${name} is required`);
    return value;
  };
  const address = values.get("webhook-bind-address");
  return {
    kubeconfig: required("kubeconfig"),
    metrics: required("metrics-bind-address"),
    probes: required("health-probe-bind-address"),
    ...(address !== undefined && { webhook: { address, namespace: required("namespace") } }),
  };
}

async function main(args: string[]): Promise<number> {
  let options: WebhookFloorOptions;
  try {
    options = parseWebhookFloorArgs(args);
  } catch (error) {
    console.error((error as Error).message);
    return 2;
  }
  const manager = new Manager({
    connection: { kubeconfig: options.kubeconfig },
    metricsAddress: options.metrics,
    healthAddress: options.probes,
    reportingController: `kinglet.dev/${WEBHOOK_FLOOR_OPERATOR}`,
    ...(options.webhook && {
      webhook: {
        operator: WEBHOOK_FLOOR_OPERATOR,
        address: options.webhook.address,
        certificates: { namespace: options.webhook.namespace },
      },
    }),
  });
  manager.add({
    name: WEBHOOK_FLOOR_OPERATOR,
    resource: WEBAPPS,
    reconcile: () => Promise.resolve({}),
  });
  if (options.webhook) manager.addWebhook(webAppAdmission);
  await manager.run(); // until SIGINT or SIGTERM
  return 0;
}

if (import.meta.main) Deno.exit(await main(Deno.args));
