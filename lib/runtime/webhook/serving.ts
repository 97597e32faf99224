/**
 * An operator's webhooks as its manager runs them, on every candidate:
 * the certificates kept in one store ({@link CertificateKeeper}), the CA
 * bundle put into the operator's webhook configurations and converted CRDs,
 * and the HTTPS server ({@link WebhookServer}) answering the API server.
 *
 * What the caller must know:
 *
 * - Where the API server calls: with `service` set (in a pod), through the
 *   Service `deploy` writes in front of the pods (`<operator>-webhook`, port
 *   443); otherwise `https://127.0.0.1:<port>`, the node's own API server
 *   calling the kinglet beside it (node mode). The configurations are
 *   `deploy`'s; the runtime only fills their `caBundle`, by entry name.
 * - Certificates live in the Secret `<operator>-webhook-tls` of the given
 *   namespace, shared by every candidate (and every node), or in a
 *   directory, which serves one node alone.
 * - {@link WebhookServing.ready} resolves once the server listens and its
 *   CA bundle has been injected once; the manager installs CRDs after it,
 *   with {@link WebhookServing.withConversion} filling their conversion.
 *
 * @example
 * ```ts
 * import { WebhookServing } from "./serving.ts";
 * import { denied, allowed } from "./spec.ts";
 * import { MemoryCluster } from "../../testing/memory_cluster.ts";
 * const client = new MemoryCluster({ namespaces: ["ops"] });
 * const serving = new WebhookServing(
 *   { operator: "demo", address: "127.0.0.1:0", certificates: { namespace: "ops" } },
 *   { client },
 * );
 * serving.add({
 *   resource: { group: "example.com", version: "v1", plural: "widgets", kind: "Widget", namespaced: true },
 *   validate: ({ object }) => object?.metadata?.name ? allowed() : denied("a Widget needs a name"),
 * });
 * serving.paths; // ["/validate/example.com/widgets"]
 * ```
 *
 * @module
 */
import { type Clock, systemClock } from "../../async/clock.ts";
import { isNotFound } from "../../kube/errors.ts";
import type { KubeClient } from "../../kube/client.ts";
import type { KubeObject } from "../../kube/types.ts";
import type { RuntimeMetrics } from "../metrics/metrics.ts";
import { caBundleInjector, type CaBundleTargets, type WebhookClientConfig } from "./ca_bundle.ts";
import { CertificateKeeper } from "./certificates.ts";
import {
  type CertificateStore,
  DirectoryCertificateStore,
  SecretCertificateStore,
} from "./cert_store.ts";
import { WebhookServer } from "./server.ts";
import {
  type AdmissionWebhook,
  type Conversion,
  DEFAULT_WEBHOOK_PORT,
  parseWebhookAddress,
  webhookName,
  webhookObjectNames,
  webhookPaths,
} from "./spec.ts";

/** How an operator serves its webhooks: the manager's `webhook` option. */
export interface WebhookServingOptions {
  /** The operator's name, e.g. `widget-operator`: it names the configurations, Secret and Service. */
  operator: string;
  /**
   * `host:port` the server listens on; `:9443` listens on every interface
   * (a pod). @default "127.0.0.1:9443" (node mode: the API server beside it)
   */
  address?: string;
  /** In a pod: the namespace of the Service `deploy` writes in front of the server. */
  service?: { namespace: string };
  /**
   * Where the CA and the serving certificate live: the Secret
   * `<operator>-webhook-tls` in `namespace`, or a directory (one node alone).
   */
  certificates: { namespace: string } | { directory: string };
  /** The CA's life. @default 365 days */
  caLifetimeMs?: number;
  /** The serving certificate's life. @default 90 days */
  servingLifetimeMs?: number;
  /** How long a new CA is in the bundle before it signs. @default 60 000 */
  settleMs?: number;
  /** How often the store is read again. @default 60 000 */
  refreshMs?: number;
}

/** What {@link WebhookServing} calls the cluster with: a `KubeClient`, or the test kit's `MemoryCluster`. */
export type ServingClient =
  & Pick<KubeClient, "get" | "list" | "create" | "replace" | "patch">
  & Partial<Pick<KubeClient, "getOptional">>;

/** What {@link WebhookServing} is lent by its manager. */
export interface ServingDeps {
  /** Reads the cluster for handlers, keeps the Secret, injects the CA bundle. */
  client: ServingClient;
  /** Where the webhook metrics go. Defaults to none. */
  metrics?: RuntimeMetrics;
  /** Reads Unix milliseconds: certificates carry dates. Defaults to {@link systemClock}. */
  clock?: Clock;
}

/** See the module documentation. */
export class WebhookServing {
  /** Resolves once the server listens and the bundle was injected once. */
  readonly ready: Promise<void>;
  readonly #options: WebhookServingOptions;
  readonly #deps: ServingDeps;
  readonly #admission: AdmissionWebhook[] = [];
  readonly #conversions: Conversion[] = [];
  readonly #hostname: string;
  readonly #port: number;
  #listeningPort: number | undefined;
  #keeper: CertificateKeeper | undefined;
  #ready!: () => void;

  /**
   * Checks the options; nothing listens before {@link WebhookServing.run}.
   *
   * @throws {RangeError} when `operator` is empty or `address` is not `host:port`.
   */
  constructor(options: WebhookServingOptions, deps: ServingDeps) {
    if (typeof options.operator !== "string" || options.operator === "") {
      throw new RangeError(
        `Cannot serve webhooks: 'operator' must name the operator, got ${
          JSON.stringify(options.operator)
        }`,
      );
    }
    const { hostname, port } = parseWebhookAddress(
      options.address ?? `127.0.0.1:${DEFAULT_WEBHOOK_PORT}`,
    );
    this.#hostname = hostname;
    this.#port = port;
    this.#options = options;
    this.#deps = deps;
    this.ready = new Promise((resolve) => this.#ready = resolve);
  }

  /** Adds an admission webhook or a conversion; call before {@link WebhookServing.run}. */
  add(webhook: AdmissionWebhook | Conversion): void {
    if ("hub" in webhook) this.#conversions.push(webhook);
    else this.#admission.push(webhook as AdmissionWebhook);
  }

  /** Whether anything was added. */
  get empty(): boolean {
    return this.#admission.length === 0 && this.#conversions.length === 0;
  }

  /** The paths served, in the order added. */
  get paths(): string[] {
    return [
      ...this.#admission.flatMap((w) => [
        ...(w.validate ? [webhookPaths.validate(w.resource)] : []),
        ...(w.default ? [webhookPaths.mutate(w.resource)] : []),
      ]),
      ...this.#conversions.map((c) => webhookPaths.convert(c.resource)),
    ];
  }

  /**
   * `crd` with its conversion pointed at this server and its CA bundle, when
   * one of the added conversions is its kind's; otherwise `crd` as given.
   */
  withConversion<T extends KubeObject>(crd: T): T {
    const conversion = this.#conversions.find((c) =>
      crd.metadata?.name === `${c.resource.plural}.${c.resource.group}`
    );
    const bundle = this.#keeper?.caBundle();
    if (!conversion || !bundle) return crd;
    const clientConfig = this.#clientConfig(webhookPaths.convert(conversion.resource));
    const spec = (crd as { spec?: Record<string, unknown> }).spec ?? {};
    return {
      ...crd,
      spec: {
        ...spec,
        conversion: {
          strategy: "Webhook",
          webhook: {
            conversionReviewVersions: ["v1"],
            clientConfig: { ...clientConfig, caBundle: btoa(bundle) },
          },
        },
      },
    };
  }

  /**
   * Keeps the certificates and serves until `signal` aborts.
   *
   * @throws what the server's listen throws (a port in use), or the store's
   * first read when it can never succeed.
   */
  async run(signal: AbortSignal): Promise<void> {
    const { options, client } = { options: this.#options, client: this.#deps.client };
    const names = webhookObjectNames(options.operator);
    const keeper = this.#keeper = new CertificateKeeper({
      store: this.#store(),
      ...this.#subjectNames(),
      ...(options.caLifetimeMs !== undefined && { caLifetimeMs: options.caLifetimeMs }),
      ...(options.servingLifetimeMs !== undefined &&
        { servingLifetimeMs: options.servingLifetimeMs }),
      ...(options.settleMs !== undefined && { settleMs: options.settleMs }),
      ...(options.refreshMs !== undefined && { refreshMs: options.refreshMs }),
      inject: (bundle, injectSignal) =>
        caBundleInjector(withGetOptional(client), this.#targets(names))(bundle, injectSignal),
      clock: this.#deps.clock ?? systemClock,
    });
    const server = new WebhookServer({
      admission: this.#admission,
      conversions: this.#conversions,
      hostname: this.#hostname,
      port: this.#port,
      certificates: keeper,
      client,
      ...(this.#deps.metrics && { metrics: this.#deps.metrics }),
      ...(this.#deps.clock && { clock: this.#deps.clock }),
    });
    const stop = new AbortController();
    const life = AbortSignal.any([signal, stop.signal]);
    const keeping = keeper.run(life);
    const serving = server.run(life);
    try {
      await keeper.step(life);
      const { port } = await server.listening;
      this.#listeningPort = port;
      this.#ready();
      await Promise.all([keeping, serving]);
    } finally {
      stop.abort();
      await Promise.allSettled([keeping, serving]);
    }
  }

  /** The port the server listens on, once it does (the one picked for port 0). */
  get port(): number | undefined {
    return this.#listeningPort;
  }

  #store(): CertificateStore {
    const where = this.#options.certificates;
    if ("directory" in where) return new DirectoryCertificateStore(where.directory);
    return new SecretCertificateStore(withGetOptional(this.#deps.client), {
      namespace: where.namespace,
      name: webhookObjectNames(this.#options.operator).secret,
      operator: this.#options.operator,
    });
  }

  /** The names the serving certificate is valid for: loopback, and the Service's in a pod. */
  #subjectNames(): { dnsNames: string[]; ipAddresses: string[] } {
    const namespace = this.#options.service?.namespace;
    const service = webhookObjectNames(this.#options.operator).service;
    const dnsNames = ["localhost"];
    if (namespace !== undefined) {
      const svc = `${service}.${namespace}.svc`;
      dnsNames.push(service, `${service}.${namespace}`, svc, `${svc}.cluster.local`);
    }
    return { dnsNames, ipAddresses: ["127.0.0.1"] };
  }

  #clientConfig(path: string): WebhookClientConfig {
    const namespace = this.#options.service?.namespace;
    if (namespace !== undefined) {
      const name = webhookObjectNames(this.#options.operator).service;
      return { service: { namespace, name, path, port: 443 } };
    }
    return { url: `https://127.0.0.1:${this.#listeningPort ?? this.#port}${path}` };
  }

  #targets(names: ReturnType<typeof webhookObjectNames>): CaBundleTargets {
    const validating = this.#admission.filter((w) => w.validate).map((w) =>
      webhookName("validate", w.resource)
    );
    const mutating = this.#admission.filter((w) => w.default).map((w) =>
      webhookName("mutate", w.resource)
    );
    return {
      ...(validating.length > 0 && {
        validating: { name: names.validating, webhooks: validating },
      }),
      ...(mutating.length > 0 && { mutating: { name: names.mutating, webhooks: mutating } }),
      conversions: this.#conversions.map((c) => ({
        crd: `${c.resource.plural}.${c.resource.group}`,
        clientConfig: this.#clientConfig(webhookPaths.convert(c.resource)),
      })),
    };
  }
}

/** `client` with `getOptional`, made from its `get` where it has none (a manager's client). */
function withGetOptional(client: ServingClient): ServingClient & Pick<KubeClient, "getOptional"> {
  if (client.getOptional) return client as ServingClient & Pick<KubeClient, "getOptional">;
  const getOptional = <T extends KubeObject>(...args: Parameters<KubeClient["get"]>) =>
    client.get<T>(...args).catch((e) => {
      if (isNotFound(e)) return undefined;
      throw e;
    });
  return {
    get: (...args) => client.get(...args),
    list: (...args) => client.list(...args),
    create: (...args) => client.create(...args),
    replace: (...args) => client.replace(...args),
    patch: (...args) => client.patch(...args),
    getOptional,
  } as ServingClient & Pick<KubeClient, "getOptional">;
}
