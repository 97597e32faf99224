/**
 * Puts the webhook's CA bundle where the API server reads it: the
 * `clientConfig.caBundle` of named entries of a
 * `ValidatingWebhookConfiguration` and a `MutatingWebhookConfiguration`,
 * and the `spec.conversion` of each converted CRD (with the client config
 * the API server is to call).
 *
 * What the caller must know:
 *
 * - Each object is read first and patched only where it differs, so
 *   calling this on every step of a keeper costs a GET per object.
 * - A configuration entry is patched by a JSON Patch whose first operation
 *   tests the entry's name at its index: a list reordered in between fails
 *   the patch (422) rather than change another entry. Entries not named are
 *   left alone. A strategic merge patch would do the same on a real API
 *   server, but would add an incomplete entry where the name is missing.
 * - An absent configuration, entry or CRD is skipped with a debug line: it
 *   is installed later (`deploy`, or the manager's CRDs) and the next call
 *   fills it.
 * - RBAC: `get` and `patch` on the configurations and CRDs, by name.
 *
 * @example
 * ```ts
 * import { injectCaBundle } from "./ca_bundle.ts";
 * import { MemoryCluster } from "../../testing/memory_cluster.ts";
 * const cluster = new MemoryCluster();
 * const targets = { validating: { name: "demo-validating", webhooks: ["vwidgets.example.com"] } };
 * await injectCaBundle(cluster, "-----BEGIN CERTIFICATE-----\n...", targets); // []: nothing there yet
 * ```
 *
 * @module
 */
import type { KubeClient } from "../../kube/client.ts";
import {
  CUSTOM_RESOURCE_DEFINITIONS,
  MUTATING_WEBHOOK_CONFIGURATIONS,
  VALIDATING_WEBHOOK_CONFIGURATIONS,
} from "../../kube/resources.ts";
import type { KubeObject, Resource } from "../../kube/types.ts";
import { logger } from "../../log.ts";

const log = logger("webhook");

/** Where the API server calls the webhook: a URL (node mode) or a Service (in a pod). */
export type WebhookClientConfig =
  | { url: string; service?: undefined }
  | {
    service: { namespace: string; name: string; path?: string; port?: number };
    url?: undefined;
  };

/** The objects that get the bundle. */
export interface CaBundleTargets {
  /** A ValidatingWebhookConfiguration and the names of its entries to fill. */
  validating?: { name: string; webhooks: readonly string[] };
  /** A MutatingWebhookConfiguration and the names of its entries to fill. */
  mutating?: { name: string; webhooks: readonly string[] };
  /** Converted CRDs by name (`<plural>.<group>`), each with the client config to call. */
  conversions?: readonly { crd: string; clientConfig: WebhookClientConfig }[];
}

/** The client calls {@link injectCaBundle} makes. */
export type CaBundleClient = Pick<KubeClient, "getOptional" | "patch">;

interface Configuration extends KubeObject {
  webhooks?: { name: string; clientConfig?: { caBundle?: string } }[];
}

interface Crd extends KubeObject {
  spec?: { conversion?: { strategy?: string; webhook?: ConversionWebhook } };
}

interface ConversionWebhook {
  conversionReviewVersions?: string[];
  clientConfig?: {
    url?: string | null;
    service?: {
      namespace: string;
      name: string;
      path?: string | null;
      port?: number;
    } | null;
    caBundle?: string;
  };
}

/**
 * Writes `bundle` (PEM) into `targets` where it differs; resolves to the
 * objects patched, as `<plural>/<name>`.
 *
 * @throws {ApiError} what a read or a patch answers but 404.
 */
export async function injectCaBundle(
  client: CaBundleClient,
  bundle: string,
  targets: CaBundleTargets,
  signal?: AbortSignal,
): Promise<string[]> {
  const caBundle = btoa(bundle);
  const patched: string[] = [];
  const configurations = [
    [VALIDATING_WEBHOOK_CONFIGURATIONS, targets.validating],
    [MUTATING_WEBHOOK_CONFIGURATIONS, targets.mutating],
  ] as const;
  for (const [resource, target] of configurations) {
    if (target && await injectConfiguration(client, resource, target, caBundle, signal)) {
      patched.push(`${resource.plural}/${target.name}`);
    }
  }
  for (const { crd, clientConfig } of targets.conversions ?? []) {
    if (await injectConversion(client, crd, clientConfig, caBundle, signal)) {
      patched.push(`${CUSTOM_RESOURCE_DEFINITIONS.plural}/${crd}`);
    }
  }
  return patched;
}

/**
 * {@link injectCaBundle} bound to a client and its targets: the `inject`
 * option of a `CertificateKeeper`.
 */
export function caBundleInjector(
  client: CaBundleClient,
  targets: CaBundleTargets,
): (bundle: string, signal?: AbortSignal) => Promise<string[]> {
  return (bundle, signal) => injectCaBundle(client, bundle, targets, signal);
}

async function injectConfiguration(
  client: CaBundleClient,
  resource: Resource,
  target: { name: string; webhooks: readonly string[] },
  caBundle: string,
  signal: AbortSignal | undefined,
): Promise<boolean> {
  const found = await client.getOptional<Configuration>(resource, target.name, { signal });
  if (!found) {
    log.debug("No {kind} {name} to put the CA bundle in, yet", {
      kind: resource.kind,
      name: target.name,
    });
    return false;
  }
  const operations: unknown[] = [];
  const entries = found.webhooks ?? [];
  for (const name of target.webhooks) {
    const index = entries.findIndex((entry) => entry.name === name);
    if (index < 0) {
      log.debug("{kind} {name} has no webhook {webhook} to put the CA bundle in", {
        kind: resource.kind,
        name: target.name,
        webhook: name,
      });
      continue;
    }
    if (entries[index]!.clientConfig?.caBundle === caBundle) continue;
    const path = `/webhooks/${index}`;
    operations.push({ op: "test", path: `${path}/name`, value: name });
    operations.push(
      entries[index]!.clientConfig
        ? { op: "add", path: `${path}/clientConfig/caBundle`, value: caBundle }
        : { op: "add", path: `${path}/clientConfig`, value: { caBundle } },
    );
  }
  if (operations.length === 0) return false;
  await client.patch(resource, target.name, operations, { type: "json", signal });
  return true;
}

async function injectConversion(
  client: CaBundleClient,
  name: string,
  clientConfig: WebhookClientConfig,
  caBundle: string,
  signal: AbortSignal | undefined,
): Promise<boolean> {
  const found = await client.getOptional<Crd>(CUSTOM_RESOURCE_DEFINITIONS, name, { signal });
  if (!found) {
    log.debug("No CRD {name} to put the CA bundle in, yet", { name });
    return false;
  }
  const service = clientConfig.service;
  const desired: ConversionWebhook = {
    conversionReviewVersions: ["v1"],
    clientConfig: service === undefined ? { url: clientConfig.url, service: null, caBundle } : {
      url: null,
      // A merge patch keeps what it does not name: an absent path is written as null.
      service: { ...service, path: service.path ?? null, port: service.port ?? 443 },
      caBundle,
    },
  };
  const conversion = found.spec?.conversion;
  if (conversion?.strategy === "Webhook" && sameConversion(conversion.webhook, desired)) {
    return false;
  }
  const patch = { spec: { conversion: { strategy: "Webhook", webhook: desired } } };
  await client.patch(CUSTOM_RESOURCE_DEFINITIONS, name, patch, { type: "merge", signal });
  return true;
}

/** Whether `current` already says what `desired` does; a `null` in `desired` means absent. */
function sameConversion(current: ConversionWebhook | undefined, desired: ConversionWebhook) {
  const have = current?.clientConfig;
  const want = desired.clientConfig!;
  const sameService = (["namespace", "name", "path", "port"] as const).every((field) =>
    (have?.service?.[field] ?? null) === (want.service?.[field] ?? null)
  );
  return current?.conversionReviewVersions?.join() === "v1" &&
    have?.caBundle === want.caBundle &&
    (have?.url ?? null) === want.url &&
    ((have?.service ?? null) === null) === (want.service === null) &&
    sameService;
}
