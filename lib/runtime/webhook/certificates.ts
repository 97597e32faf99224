/**
 * The webhook's certificates, kept by kinglet itself: no cert-manager. A
 * {@link CertificateKeeper} makes a CA and a serving certificate when its
 * {@link CertificateStore} holds none, hands the serving certificate to the
 * server (it is a {@link CertificateSource}), puts the CA bundle where the
 * API server reads it, and rotates both before they expire, with no
 * moment at which the API server would not trust what is served.
 *
 * What the caller must know:
 *
 * - Every candidate runs a keeper on the same store; the leader is not
 *   needed. Decisions follow from the stored certificates and the time, so
 *   candidates decide alike; writes are optimistic, and a keeper whose
 *   write loses reads again and takes what won.
 * - Rotation (the rules are in `_rotation.ts`): the serving certificate at
 *   2/3 of its life; the CA at 2/3 of its life with overlap: the new CA
 *   joins the bundle first, the serving certificate is issued from it only
 *   once this keeper has injected a bundle holding it and `settleMs` has
 *   passed, and the old CA leaves the bundle when it expires.
 * - Every keeper injects the bundle it has just read. One that read just
 *   before another's write may put the older bundle back for a moment; it
 *   decided on the same due time, so its own write loses and it reads and
 *   injects the newer bundle in the same step. `settleMs` covers that
 *   moment as well as the API server's own catching up.
 * - The clock must read Unix milliseconds (the system clock does; in tests
 *   a `FakeClock` started at `Date.now()`): certificates carry dates.
 * - Failures (store, injection) are logged and retried with backoff; the
 *   certificate already served stays served.
 *
 * @example
 * ```ts
 * import { CertificateKeeper } from "./certificates.ts";
 * import { SecretCertificateStore } from "./cert_store.ts";
 * import { MemoryCluster } from "../../testing/memory_cluster.ts";
 * const cluster = new MemoryCluster({ namespaces: ["ops"] });
 * const keeper = new CertificateKeeper({
 *   store: new SecretCertificateStore(cluster, { namespace: "ops", name: "demo-webhook-tls", operator: "demo" }),
 *   ipAddresses: ["127.0.0.1"],
 * });
 * await keeper.step();
 * keeper.current()?.cert.startsWith("-----BEGIN CERTIFICATE-----"); // true
 * ```
 *
 * @module
 */
import { Backoff } from "../../async/backoff.ts";
import { type Clock, systemClock } from "../../async/clock.ts";
import { describeError } from "../../kube/errors.ts";
import { logger } from "../../log.ts";
import { canonicalIpAddress, splitCertificates } from "../../x509/mod.ts";
import type { CertificateStore, StoredCertificates } from "./cert_store.ts";
import type { CertificateSource, ServingCertificate } from "./certificate_source.ts";
import { type RotationPolicy, rotationStep } from "./_rotation.ts";

const log = logger("webhook");

const DAY_MS = 86_400_000;
/** Writes in a row a step may make before it waits: each is a new state, so more means a bug. */
const MAX_WRITES_PER_STEP = 4;

/** Options of {@link CertificateKeeper}. */
export interface CertificateKeeperOptions {
  /** Where every candidate finds the certificates. */
  store: CertificateStore;
  /** DNS names the API server calls, e.g. `<service>.<namespace>.svc`. @default [] */
  dnsNames?: readonly string[];
  /** Addresses the API server calls, e.g. `127.0.0.1` in node mode. @default [] */
  ipAddresses?: readonly string[];
  /** The CA's common name, followed by `@<Unix seconds>`. @default "kinglet-webhook-ca" */
  caName?: string;
  /** How long a CA is valid; it is replaced at two thirds of it. @default 365 days */
  caLifetimeMs?: number;
  /** How long a serving certificate is valid; renewed at two thirds of it. @default 90 days */
  servingLifetimeMs?: number;
  /**
   * How long a bundle holding a new CA is in the API server before the
   * serving certificate is issued from that CA; the API server reads
   * configurations through a watch, so a little while suffices.
   * @default 60_000
   */
  settleMs?: number;
  /** How often the store is read again and the bundle checked in place. @default 60_000 */
  refreshMs?: number;
  /**
   * Puts the CA bundle (PEM) where the API server reads it, e.g.
   * `caBundleInjector(client, targets)`; called on every step. @default none
   */
  inject?: (bundle: string, signal?: AbortSignal) => Promise<unknown>;
  /** Reads Unix milliseconds. @default systemClock */
  clock?: Clock;
}

/**
 * Keeps a CA and a serving certificate in a {@link CertificateStore} for
 * all the candidates of an operator; see the module documentation.
 */
export class CertificateKeeper implements CertificateSource {
  readonly #store: CertificateStore;
  readonly #policy: RotationPolicy;
  readonly #refreshMs: number;
  readonly #inject: CertificateKeeperOptions["inject"];
  readonly #clock: Clock;
  readonly #listeners = new Set<(certificate: ServingCertificate) => void>();
  #current: ServingCertificate | undefined;
  #bundle: string | undefined;
  /** When a bundle holding the current CA (`ca`) was last seen to reach the API server. */
  #trusted: { ca: string; at: number } | undefined;
  /** The step running, which a second caller joins. */
  #stepping: Promise<number> | undefined;

  /**
   * Creates a keeper; nothing is read until {@link step} or {@link run}.
   *
   * @throws {RangeError} when a duration is not positive, no name or address
   * is given, or an address is not one.
   */
  constructor(options: CertificateKeeperOptions) {
    const positive = (name: string, value: number) => {
      if (!(value > 0) || !Number.isFinite(value)) {
        throw new RangeError(
          `Cannot keep the webhook's certificates: '${name}' must be a positive number of ` +
            `milliseconds, got ${value}`,
        );
      }
      return value;
    };
    const dnsNames = options.dnsNames ?? [];
    const ipAddresses = (options.ipAddresses ?? []).map((address) => {
      try {
        return canonicalIpAddress(address);
      } catch {
        throw new RangeError(
          `Cannot keep the webhook's certificates: 'ipAddresses' holds ${
            JSON.stringify(address)
          }, no address`,
        );
      }
    });
    if (dnsNames.length + ipAddresses.length === 0) {
      throw new RangeError(
        "Cannot keep the webhook's certificates: 'dnsNames' and 'ipAddresses' are both empty",
      );
    }
    this.#policy = {
      caName: options.caName ?? "kinglet-webhook-ca",
      caLifetimeMs: positive("caLifetimeMs", options.caLifetimeMs ?? 365 * DAY_MS),
      servingLifetimeMs: positive("servingLifetimeMs", options.servingLifetimeMs ?? 90 * DAY_MS),
      settleMs: positive("settleMs", options.settleMs ?? 60_000),
      dnsNames,
      ipAddresses,
    };
    this.#refreshMs = positive("refreshMs", options.refreshMs ?? 60_000);
    this.#store = options.store;
    this.#inject = options.inject;
    this.#clock = options.clock ?? systemClock;
  }

  /** The serving certificate, once a step has read or made one. */
  current(): ServingCertificate | undefined {
    return this.#current;
  }

  /** Calls `listener` with each new serving certificate; returns a function that stops it. */
  subscribe(listener: (certificate: ServingCertificate) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** The CA bundle (PEM) last read from the store: what the API server is to trust. */
  caBundle(): string | undefined {
    return this.#bundle;
  }

  /**
   * One pass: reads the store, injects its bundle, writes what the
   * rotation rules want (reading again after each write, lost or won), and
   * hands out the serving certificate that stands. Resolves to when the
   * next pass is due, in Unix milliseconds. A call while a pass runs joins
   * it.
   *
   * @throws what the store throws, or, once the certificate is handed out,
   * what the injection threw; {@link run} retries.
   */
  step(signal?: AbortSignal): Promise<number> {
    this.#stepping ??= this.#step(signal).finally(() => this.#stepping = undefined);
    return this.#stepping;
  }

  /**
   * Steps until `signal` aborts: at each due time, and every `refreshMs`;
   * after a failure, again with backoff (1 s doubling to the refresh time).
   * Resolves once stopped; never rejects.
   */
  async run(signal: AbortSignal): Promise<void> {
    const backoff = new Backoff({ initialMs: 1000, maxMs: Math.max(1000, this.#refreshMs) });
    while (!signal.aborted) {
      let wait: number;
      try {
        const due = await this.step(signal);
        backoff.reset();
        wait = Math.min(due - this.#clock.now(), this.#refreshMs);
      } catch (error) {
        if (signal.aborted) return;
        wait = backoff.next();
        log.warn("Keeping the webhook's certificates failed, trying again in {ms} ms: {error}", {
          ms: Math.round(wait),
          error: describeError(error),
        });
      }
      try {
        await this.#clock.sleep(Math.max(0, wait), signal);
      } catch {
        return;
      }
    }
  }

  async #step(signal: AbortSignal | undefined): Promise<number> {
    let injection: { failed: unknown } | undefined;
    for (let writes = 0;; writes++) {
      const record = await this.#store.read(signal);
      const stored = record?.certificates;
      if (stored) injection = await this.#injectBundle(stored, signal);
      const now = this.#clock.now();
      const trustedSince = stored && this.#trusted?.ca === stored.ca.cert
        ? this.#trusted.at
        : undefined;
      const { next, reason, wakeAt } = await rotationStep(stored, now, trustedSince, this.#policy);
      if (next && writes < MAX_WRITES_PER_STEP) {
        const version = await this.#store.write(next, record?.version, signal);
        if (version === undefined) {
          log.debug("Another candidate changed the webhook's certificates first; reading them");
        } else {
          log.info("Wrote new webhook certificates: {reason}", { reason });
        }
        continue;
      }
      // Served only once the rules let it stand: never one about to be replaced.
      if (stored) this.#serve(stored.serving);
      if (injection) throw injection.failed;
      return next ? now + this.#refreshMs : wakeAt;
    }
  }

  #serve({ cert, key }: ServingCertificate): void {
    if (this.#current?.cert === cert && this.#current.key === key) return;
    const certificate = { cert, key };
    this.#current = certificate;
    for (const listener of [...this.#listeners]) {
      try {
        listener(certificate);
      } catch (error) {
        log.error("A listener of the serving certificate failed: {error}", {
          error: describeError(error),
        });
      }
    }
  }

  /**
   * Injects `stored`'s bundle and notes when its current CA became trusted;
   * a failure is handed back, so that the certificate is still served.
   */
  async #injectBundle(
    stored: StoredCertificates,
    signal: AbortSignal | undefined,
  ): Promise<{ failed: unknown } | undefined> {
    this.#bundle = stored.caBundle;
    try {
      await this.#inject?.(stored.caBundle, signal);
    } catch (failed) {
      return { failed };
    }
    const ca = stored.ca.cert;
    if (this.#trusted?.ca !== ca && splitCertificates(stored.caBundle).includes(ca)) {
      this.#trusted = { ca, at: this.#clock.now() };
    }
    return undefined;
  }
}
