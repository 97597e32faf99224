/**
 * The webhook server: HTTPS on `Deno.serve`, answering the API server's
 * `AdmissionReview`s (at {@link webhookPaths}`.validate` and `.mutate`) and
 * `ConversionReview`s (at `.convert`) for the webhooks it is given.
 *
 * What the caller must know:
 *
 * - It listens once its {@link CertificateSource} has a certificate, and
 *   takes each new one without dropping a request: the public port relays
 *   each connection to a TLS listener on loopback; a new certificate starts
 *   a new TLS listener, new connections go there, and the old one closes
 *   gracefully, finishing what it had begun (_relay.ts says why not
 *   `reusePort`).
 * - It serves every candidate, leader or not, and needs no cache: handlers
 *   read the cluster through the client they are lent.
 * - A body over 7 MiB and a malformed review are answered 400, with a
 *   message for the API server's log; a path it does not serve 404.
 * - Handlers that throw or run late are answered by their failure policy
 *   (admission.ts); a conversion that fails answers `Failure` with why.
 * - With `metrics`, it records `controller_runtime_webhook_*` per path and
 *   `kinglet_webhook_handler_failures_total`.
 *
 * @example
 * ```ts ignore
 * import { WebhookServer } from "./server.ts";
 * import { allowed, denied } from "./spec.ts";
 * const server = new WebhookServer({
 *   admission: [{
 *     resource: { group: "example.com", version: "v1", plural: "webapps", kind: "WebApp", namespaced: true },
 *     validate: ({ object }) => object?.spec ? allowed() : denied("spec is required"),
 *   }],
 *   certificates, // a CertificateSource, e.g. the CertificateKeeper
 *   client,
 * });
 * const stop = new AbortController();
 * const running = server.run(stop.signal);
 * const { port } = await server.listening;
 * ```
 *
 * @module
 */
import { type Clock, systemClock } from "../../async/clock.ts";
import { describeError } from "../../kube/errors.ts";
import { logger } from "../../log.ts";
import type { RuntimeMetrics } from "../metrics/metrics.ts";
import type { WebhookMetrics } from "../metrics/webhook_metrics.ts";
import { type AdmissionKind, admit, handlerTimeoutMs } from "./admission.ts";
import type { CertificateSource, ServingCertificate } from "./certificate_source.ts";
import { ConversionError, convertObject } from "./conversion.ts";
import { ConnectionRelay } from "./_relay.ts";
import {
  admissionReviewResponse,
  conversionReviewResponse,
  decodeAdmissionReview,
  decodeConversionReview,
  readJsonBody,
  ReviewError,
} from "./_reviews.ts";
import {
  type AdmissionWebhook,
  type Conversion,
  DEFAULT_WEBHOOK_PORT,
  type WebhookClient,
  webhookPaths,
} from "./spec.ts";

/** Options of {@link WebhookServer}. */
export interface WebhookServerOptions {
  /** Validation and defaulting, one entry per kind. @default none */
  admission?: readonly AdmissionWebhook[];
  /** Conversions, one per kind. @default none */
  conversions?: readonly Conversion[];
  /** Where to listen; `0.0.0.0` in a pod behind a Service. @default "127.0.0.1" */
  hostname?: string;
  /** The port; 0 picks a free one. @default DEFAULT_WEBHOOK_PORT (9443) */
  port?: number;
  /** The serving certificate, and word of each new one. */
  certificates: CertificateSource;
  /** What handlers read the cluster through. */
  client: WebhookClient;
  /** Records the webhook metrics. @default none */
  metrics?: RuntimeMetrics;
  /** Times requests and handlers. @default systemClock */
  clock?: Clock;
}

/** Where the server listens. */
export interface WebhookAddress {
  /** The address listened on, e.g. `127.0.0.1`. */
  hostname: string;
  /** The port listened on (the one picked, for port 0). */
  port: number;
}

type Serve = (
  request: Request,
  signal: AbortSignal,
  metrics: WebhookMetrics | undefined,
) => Promise<Response>;

interface Route {
  serve: Serve;
  metrics: WebhookMetrics | undefined;
}

/** The HTTPS endpoint the API server calls; see the module doc. */
export class WebhookServer {
  /** Resolves once the server listens (with the port picked for 0); rejects when it cannot. */
  readonly listening: Promise<WebhookAddress>;
  readonly #routes = new Map<string, Route>();
  readonly #options: WebhookServerOptions;
  readonly #clock: Clock;
  readonly #log = logger("webhook");
  #listened!: (address: WebhookAddress) => void;
  #refused!: (error: unknown) => void;
  #running = false;

  /**
   * Checks the options and lays out the routes; nothing listens before {@link run}.
   *
   * @throws {RangeError} when `port` is not an integer from 0 to 65535, or a
   *   webhook's `timeoutSeconds` or `handlerTimeoutMs` is out of range.
   * @throws {TypeError} when there is nothing to serve, or two entries claim one kind.
   */
  constructor(options: WebhookServerOptions) {
    const port = options.port ?? DEFAULT_WEBHOOK_PORT;
    if (!Number.isInteger(port) || port < 0 || port > 65535) {
      throw new RangeError(
        `Cannot start the webhook server: 'port' must be an integer from 0 to 65535, got ${port}`,
      );
    }
    this.#options = options;
    this.#clock = options.clock ?? systemClock;
    this.listening = new Promise((resolve, reject) => {
      this.#listened = resolve;
      this.#refused = reject;
    });
    // A caller that never asks where the server listens must not see an unhandled rejection.
    this.listening.catch(() => {});
    for (const webhook of options.admission ?? []) {
      handlerTimeoutMs(webhook);
      for (const kind of ["validate", "mutate"] as const) {
        if (!(kind === "validate" ? webhook.validate : webhook.default)) continue;
        this.#route(
          webhookPaths[kind](webhook.resource),
          (request, signal, metrics) => this.#admit(webhook, kind, request, signal, metrics),
        );
      }
    }
    for (const conversion of options.conversions ?? []) {
      this.#route(
        webhookPaths.convert(conversion.resource),
        (request, _, metrics) => this.#convert(conversion, request, metrics),
      );
    }
    if (this.#routes.size === 0) {
      throw new TypeError(
        "Cannot start the webhook server: 'admission' and 'conversions' declare no handler",
      );
    }
  }

  /** The paths served, for a log line or a test. */
  get paths(): string[] {
    return [...this.#routes.keys()];
  }

  /**
   * Waits for the first certificate, serves until `signal` aborts, then
   * closes gracefully; resolves once closed.
   *
   * @throws {TypeError} when called twice.
   * @throws {Deno.errors.AddrInUse} (or another listen error) when the port cannot be bound.
   */
  async run(signal: AbortSignal): Promise<void> {
    if (this.#running) throw new TypeError("Cannot run the webhook server twice");
    this.#running = true;
    const source = this.#options.certificates;
    let latest: ServingCertificate | undefined;
    let wake: (() => void) | undefined;
    const unsubscribe = source.subscribe((certificate) => {
      latest = certificate;
      wake?.();
    });
    const changed = () => new Promise<void>((resolve) => (wake = resolve));
    const stopped = new Promise<void>((resolve) =>
      signal.aborted ? resolve() : signal.addEventListener("abort", () => resolve(), { once: true })
    );
    try {
      latest ??= source.current();
      while (!latest && !signal.aborted) await Promise.race([changed(), stopped]);
      if (!latest) {
        this.#refused(new DOMException("stopped before a certificate came", "AbortError"));
        return;
      }
      let serving: ServingCertificate = latest;
      let tls: Deno.HttpServer<Deno.NetAddr> | undefined;
      let relay: ConnectionRelay;
      try {
        tls = this.#listen(serving, signal);
        const listener = Deno.listen({
          hostname: this.#options.hostname ?? "127.0.0.1",
          port: this.#options.port ?? DEFAULT_WEBHOOK_PORT,
        });
        relay = new ConnectionRelay(listener, tls.addr.port);
      } catch (error) {
        await tls?.shutdown();
        this.#refused(error);
        throw error;
      }
      const relaying = relay.serve().catch((error) =>
        this.#log.error("the webhook port stopped accepting connections: {error}", {
          error: describeError(error),
        })
      );
      const address = { hostname: relay.addr.hostname, port: relay.addr.port };
      this.#log.info("serving webhooks {paths} on {address}", {
        paths: this.paths.join(" "),
        address: `${address.hostname}:${address.port}`,
      });
      this.#listened(address);
      while (!signal.aborted) {
        if (latest === serving) {
          await Promise.race([changed(), stopped]);
          continue;
        }
        serving = latest;
        tls = await this.#swap(relay, tls, serving, signal);
      }
      relay.close();
      await tls.shutdown();
      relay.closeConnections();
      await relaying;
    } finally {
      unsubscribe();
    }
  }

  /** A TLS listener with `certificate` on a loopback port of its own, behind the relay. */
  #listen(certificate: ServingCertificate, signal: AbortSignal): Deno.HttpServer<Deno.NetAddr> {
    return Deno.serve({
      hostname: "127.0.0.1",
      port: 0,
      cert: certificate.cert,
      key: certificate.key,
      onListen: () => {},
      onError: (error) => {
        this.#log.error("webhook request failed: {error}", { error: describeError(error) });
        return text(500, "internal error");
      },
    }, (request) => this.#handle(request, signal));
  }

  /**
   * The new TLS listener, once the relay sends new connections to it and the
   * old one has finished its requests; the old one still, if the new one cannot start.
   */
  async #swap(
    relay: ConnectionRelay,
    old: Deno.HttpServer<Deno.NetAddr>,
    certificate: ServingCertificate,
    signal: AbortSignal,
  ): Promise<Deno.HttpServer<Deno.NetAddr>> {
    let next: Deno.HttpServer<Deno.NetAddr>;
    try {
      next = this.#listen(certificate, signal);
    } catch (error) {
      this.#log.error("cannot serve the new certificate, keeping the old one: {error}", {
        error: describeError(error),
      });
      return old;
    }
    relay.target = next.addr.port;
    await old.shutdown();
    this.#log.info("serving certificate replaced on {address}", {
      address: `${relay.addr.hostname}:${relay.addr.port}`,
    });
    return next;
  }

  async #handle(request: Request, signal: AbortSignal): Promise<Response> {
    const path = new URL(request.url).pathname;
    const route = this.#routes.get(path);
    if (!route) return text(404, `no webhook is served at ${path}`);
    if (request.method !== "POST") {
      return text(405, `${request.method} is not allowed; webhooks take POST`, { allow: "POST" });
    }
    const started = this.#clock.now();
    route.metrics?.inFlight(1);
    let status = 500;
    try {
      const response = await route.serve(request, signal, route.metrics);
      status = response.status;
      return response;
    } catch (error) {
      if (!(error instanceof ReviewError)) throw error;
      status = error.status;
      this.#log.warn("refused a request to {path}: {message}", { path, message: error.message });
      return text(error.status, error.message);
    } finally {
      route.metrics?.inFlight(-1);
      route.metrics?.answered(status, (this.#clock.now() - started) / 1000);
    }
  }

  async #admit(
    webhook: AdmissionWebhook,
    kind: AdmissionKind,
    request: Request,
    signal: AbortSignal,
    metrics: WebhookMetrics | undefined,
  ): Promise<Response> {
    const review = decodeAdmissionReview(await readJsonBody(request));
    const outcome = await admit(webhook, kind, review, {
      client: this.#options.client,
      signal,
      clock: this.#clock,
    });
    if (outcome.failure) metrics?.handlerFailed(outcome.failure.reason);
    return json(admissionReviewResponse(review.uid, outcome));
  }

  async #convert(
    conversion: Conversion,
    request: Request,
    metrics: WebhookMetrics | undefined,
  ): Promise<Response> {
    const review = decodeConversionReview(await readJsonBody(request));
    try {
      const convertedObjects = review.objects.map((object) =>
        convertObject(conversion, object, review.desiredAPIVersion)
      );
      return json(conversionReviewResponse(review.uid, { convertedObjects }));
    } catch (error) {
      if (!(error instanceof ConversionError)) throw error;
      this.#log.error("{message}", { message: error.message });
      if (error.reason === "ConverterFailed" || error.reason === "MetadataChanged") {
        metrics?.handlerFailed("error");
      }
      return json(conversionReviewResponse(review.uid, { message: error.message }));
    }
  }

  #route(path: string, serve: Serve): void {
    if (this.#routes.has(path)) {
      throw new TypeError(
        `Cannot start the webhook server: two entries serve ${path}; declare one per kind`,
      );
    }
    this.#routes.set(path, { serve, metrics: this.#options.metrics?.webhook(path) });
  }
}

function json(body: unknown): Response {
  return new Response(JSON.stringify(body), { headers: { "content-type": "application/json" } });
}

function text(status: number, message: string, headers: Record<string, string> = {}): Response {
  return new Response(`${message}\n`, {
    status,
    headers: { "content-type": "text/plain; charset=utf-8", ...headers },
  });
}
