/**
 * When the webhook's certificates change, decided from what is stored and
 * the time alone (no I/O but WebCrypto), so every candidate reading the same
 * store decides the same and the rules are tested without a cluster:
 *
 * 1. Nothing stored, nothing readable, or the current CA expired: a new CA
 *    and a serving certificate from it, at once (nothing trusted is lost);
 *    the bundle keeps the CAs of it still valid.
 * 2. The current CA past 2/3 of its life: a new CA becomes current and
 *    joins the bundle; the serving certificate stays, still trusted through
 *    the old CA, which stays in the bundle.
 * 3. The serving certificate past 2/3 of its life, not issued by the
 *    current CA, or naming other hosts: a new one from the current CA, but
 *    only once a bundle holding that CA has reached the API server and
 *    `settleMs` passed (`trustedSince`), unless the one stored is trusted
 *    by nothing any more (expired, or its CA left the bundle).
 * 4. A CA of the bundle expired: it leaves the bundle. An issued
 *    certificate never outlives its CA, so nothing served still needs it.
 *
 * @module
 */
import {
  type CertificateKeyPair,
  certificateValidity,
  createCertificateAuthority,
  inspectCertificate,
  issueServingCertificate,
  splitCertificates,
  verifyIssuedBy,
} from "../../x509/mod.ts";
import type { StoredCertificates } from "./cert_store.ts";

/** What the rotation is held to. */
export interface RotationPolicy {
  /** The CA's common name; each CA gets `@<Unix seconds>` after it, so CAs tell apart. */
  caName: string;
  caLifetimeMs: number;
  servingLifetimeMs: number;
  /** How long a bundle holding a new CA is in the API server before it is served from. */
  settleMs: number;
  dnsNames: readonly string[];
  /** Canonical (see `canonicalIpAddress`). */
  ipAddresses: readonly string[];
}

/** What to store next, if anything, and when to look again. */
export interface RotationStep {
  /** The certificates to write; absent when the stored ones stand. */
  next?: StoredCertificates;
  /** Why `next` differs, for the log. */
  reason?: string;
  /** When something falls due, in Unix milliseconds (with no write). */
  wakeAt: number;
}

const HOUR_MS = 3_600_000;

/**
 * The next step from `stored` at `now`; `trustedSince` is when a bundle
 * holding the stored current CA reached the API server, if it has.
 */
export async function rotationStep(
  stored: StoredCertificates | undefined,
  now: number,
  trustedSince: number | undefined,
  policy: RotationPolicy,
): Promise<RotationStep> {
  if (!stored) return await fresh(undefined, now, policy, "none stored");
  try {
    return await rotateStored(stored, now, trustedSince, policy);
  } catch (error) {
    if (!(error instanceof TypeError)) throw error;
    return await fresh(
      stored,
      now,
      policy,
      `the stored certificates are unusable: ${error.message}`,
    );
  }
}

/** A new CA, and a serving certificate from it; the bundle keeps the live CAs it had. */
async function fresh(
  stored: StoredCertificates | undefined,
  now: number,
  policy: RotationPolicy,
  reason: string,
): Promise<RotationStep> {
  const ca = await newCa(now, policy);
  let kept: string[] = [];
  try {
    kept = stored ? liveCas(stored.caBundle, now) : [];
  } catch {
    // A bundle that cannot be read keeps nothing.
  }
  const next = {
    caBundle: [...kept, ca.cert].join(""),
    ca,
    serving: await newServing(ca, now, policy),
  };
  return { next, reason, wakeAt: now };
}

async function rotateStored(
  stored: StoredCertificates,
  now: number,
  trustedSince: number | undefined,
  policy: RotationPolicy,
): Promise<RotationStep> {
  const reasons: string[] = [];
  let { ca, serving } = stored;
  const caInfo = inspectCertificate(ca.cert);
  if (!caInfo.isAuthority || now < caInfo.notBefore.getTime()) {
    throw new TypeError("the current CA is no CA, or not valid yet");
  }
  if (now >= caInfo.notAfter.getTime()) {
    return await fresh(stored, now, policy, "the current CA expired");
  }
  const caRenewAt = renewalTime(caInfo);
  if (now >= caRenewAt) {
    ca = await newCa(now, policy);
    trustedSince = undefined;
    reasons.push("the CA is two thirds through its life");
  }
  const bundle = liveCas(stored.caBundle, now);
  if (!bundle.includes(ca.cert)) bundle.push(ca.cert);
  if (bundle.join("") !== stored.caBundle && reasons.length === 0) {
    reasons.push("the bundle changed: an expired CA left it, or the current CA joined it");
  }

  const servingInfo = inspectCertificate(serving.cert);
  const servingRenewAt = renewalTime(servingInfo);
  const fromCurrent = await verifyIssuedBy(serving.cert, ca.cert);
  const sameNames = sameSet(servingInfo.dnsNames, policy.dnsNames) &&
    sameSet(servingInfo.ipAddresses, policy.ipAddresses);
  const wanted = now >= servingRenewAt || !fromCurrent || !sameNames;
  const trusted = now < servingInfo.notAfter.getTime() && await trustedBy(serving.cert, bundle);
  const settledAt = trustedSince === undefined ? undefined : trustedSince + policy.settleMs;
  const due = [caRenewAt, ...bundle.map(expiry)];
  if (wanted && (!trusted || (settledAt !== undefined && now >= settledAt))) {
    serving = await newServing(ca, now, policy);
    if (!await verifyIssuedBy(serving.cert, ca.cert)) {
      throw new TypeError("the current CA's key does not go with its certificate");
    }
    reasons.push(
      !trusted
        ? "the serving certificate is trusted by no CA of the bundle"
        : !fromCurrent
        ? "the serving certificate is not from the current CA"
        : !sameNames
        ? "the serving certificate names other hosts"
        : "the serving certificate is two thirds through its life",
    );
  } else if (wanted) {
    // Waiting for the bundle to settle: look again then, or when the certificate runs out.
    due.push(servingInfo.notAfter.getTime(), ...(settledAt === undefined ? [] : [settledAt]));
  } else {
    due.push(servingRenewAt);
  }
  if (reasons.length > 0) {
    return {
      next: { caBundle: bundle.join(""), ca, serving },
      reason: reasons.join("; "),
      wakeAt: now,
    };
  }
  return { wakeAt: Math.min(...due) };
}

/** Two thirds into the certificate's validity: when it is renewed. */
export function renewalTime(validity: { notBefore: Date; notAfter: Date }): number {
  const start = validity.notBefore.getTime();
  return start + Math.floor((validity.notAfter.getTime() - start) * 2 / 3);
}

function liveCas(bundle: string, now: number): string[] {
  return splitCertificates(bundle).filter((cert) => expiry(cert) > now);
}

function expiry(cert: string): number {
  return certificateValidity(cert).notAfter.getTime();
}

async function trustedBy(cert: string, bundle: readonly string[]): Promise<boolean> {
  for (const ca of bundle) if (await verifyIssuedBy(cert, ca)) return true;
  return false;
}

/** Backdated by at most a tenth of its life, so that short lives (in tests) keep their shape. */
function backdate(lifetimeMs: number): number {
  return Math.min(HOUR_MS, Math.floor(lifetimeMs / 10));
}

async function newCa(now: number, policy: RotationPolicy): Promise<CertificateKeyPair> {
  return await createCertificateAuthority({
    commonName: `${policy.caName}@${Math.floor(now / 1000)}`,
    now,
    lifetimeMs: policy.caLifetimeMs,
    backdateMs: backdate(policy.caLifetimeMs),
  });
}

async function newServing(ca: CertificateKeyPair, now: number, policy: RotationPolicy) {
  return await issueServingCertificate(ca, {
    dnsNames: policy.dnsNames,
    ipAddresses: policy.ipAddresses,
    now,
    lifetimeMs: policy.servingLifetimeMs,
    backdateMs: backdate(policy.servingLifetimeMs),
  });
}

function sameSet(found: readonly string[], wanted: readonly string[]): boolean {
  const canonical = new Set(found);
  return canonical.size === new Set(wanted).size && wanted.every((name) => canonical.has(name));
}
