/**
 * RBAC denials an operator met, and an assertion that there were none, for
 * tests that run an operator under least privilege (see
 * {@link testServiceAccount}). A denial is what the API server answered 403
 * Forbidden to: a verb on a resource (`plural` or `plural/subresource`) of an
 * API group, in a namespace or at the cluster scope.
 *
 * Where denials come from:
 *
 * - {@link DenialRecorder}, passed as a `KubeClient`'s `onRequest`, records
 *   every 403 that client got, retried or not, whatever the operator did
 *   with the error (a watch retried with backoff, a lost Event, a failed
 *   reconcile). The client of a {@link TestServiceAccount} has one.
 * - {@link denialsInLog} reads them from the output of an operator run as a
 *   process: the API server's own sentence, which kinglet's `ApiError`
 *   quotes (`User "system:serviceaccount:shop:op" cannot patch resource
 *   "backups/status" in API group "example.com" in the namespace "shop"`).
 *   Only the denials the operator logged are there: run it at the `info`
 *   level at least.
 *
 * @example
 * ```ts
 * import { assertNoDenials, denialsInLog } from "./denials.ts";
 * const log = 'get /api/v1/namespaces/shop/persistentvolumeclaims/data: persistentvolumeclaims "data" ' +
 *   'is forbidden: User "system:serviceaccount:shop:op" cannot get resource ' +
 *   '"persistentvolumeclaims" in API group "" in the namespace "shop" (403 Forbidden)';
 * const failed = (() => {
 *   try {
 *     assertNoDenials(denialsInLog(log));
 *   } catch (error) {
 *     return (error as Error).message;
 *   }
 * })();
 * if (!failed?.includes("- get persistentvolumeclaims (namespace shop)")) throw new Error(failed);
 * ```
 *
 * @module
 */
import type { RequestObservation } from "../kube/client.ts";

/** One request the API server refused with 403 Forbidden. */
export interface Denial {
  /** The Kubernetes verb: `get`, `list`, `watch`, `create`, `patch`, … */
  verb: string;
  /** The API group; `""` is the core group. */
  group: string;
  /** The plural, or `plural/subresource`, as RBAC rules name it. */
  resource: string;
  /** The namespace; absent for a request at the cluster scope. */
  namespace?: string;
  /** The object's name, when the request named one (a recorded denial only). */
  name?: string;
  /** The ValidatingAdmissionPolicy that refused it, when RBAC allowed it (a logged denial only). */
  policy?: string;
}

/**
 * Records the 403s of one `KubeClient`: pass {@link observe} as its
 * `onRequest`. Requests outside the resource API (discovery, `/version`)
 * are recorded with their path as the resource.
 *
 * @example
 * ```ts
 * import { DenialRecorder } from "./denials.ts";
 * const recorder = new DenialRecorder();
 * recorder.observe({
 *   verb: "list", method: "GET", code: "403", host: "127.0.0.1:6443", seconds: 0.01,
 *   path: "/apis/example.com/v1/backups", target: { group: "example.com", resource: "backups" },
 * });
 * recorder.denials; // [{ verb: "list", group: "example.com", resource: "backups" }]
 * ```
 */
export class DenialRecorder {
  readonly #denials: Denial[] = [];

  /** Every 403 observed so far, in the order they came. */
  get denials(): readonly Denial[] {
    return this.#denials;
  }

  /** Records `o` when it is a 403; give it to a `KubeClient` as `onRequest`. */
  readonly observe = (o: RequestObservation): void => {
    if (o.code !== "403") return;
    const target = o.target ?? { group: "", resource: o.path };
    this.#denials.push({ verb: o.verb, ...target });
  };

  /**
   * Throws when a 403 was observed, listing each; see {@link assertNoDenials}.
   *
   * @throws {Error} listing "verb resource (namespace)" of every denial.
   */
  assertNone(who?: string): void {
    assertNoDenials(this.#denials, who);
  }
}

/** A quote, escaped any number of times: log lines quote messages that quote the server's. */
const Q = String.raw`\\*"`;
const SERVER_DENIAL = new RegExp(
  `User ${Q}[^"\\\\]*${Q} cannot (\\S+) resource ${Q}([^"\\\\]*)${Q} in API group ${Q}([^"\\\\]*)${Q}` +
    ` (?:in the namespace ${Q}([^"\\\\]*)${Q}|at the cluster scope)`,
  "g",
);

/** A policy's refusal as kinglet's `ApiError` quotes it: `<verb> <path>: ... ValidatingAdmissionPolicy 'p'`. */
const POLICY_DENIAL =
  /\b([a-z]+) (\/apis?\/[^\s:?]+)[^:\s]*: [^\n]*?ValidatingAdmissionPolicy '([^']+)'/g;

/**
 * The denials the API server's messages in `text` describe, in order: the
 * output of an operator run as a process, as text or JSON lines (quotes
 * escaped once or more are read too). A line that tells one denial twice
 * (a JSON line's message and its `error` property) counts it once. A write
 * RBAC allowed and a ValidatingAdmissionPolicy refused counts too, with the
 * policy's name.
 */
export function denialsInLog(text: string): Denial[] {
  return text.split("\n").flatMap((line) => {
    const seen = new Map<string, Denial>();
    for (const [, verb, resource, group, namespace] of line.matchAll(SERVER_DENIAL)) {
      const denial = {
        verb: verb!,
        group: group!,
        resource: resource!,
        ...(namespace !== undefined && { namespace }),
      };
      seen.set(JSON.stringify(denial), denial);
    }
    for (const [, verb, path, policy] of line.matchAll(POLICY_DENIAL)) {
      const denial = { verb: verb!, ...pathTarget(path!), policy: policy! };
      seen.set(JSON.stringify(denial), denial);
    }
    return [...seen.values()];
  });
}

/** The group, resource and namespace a request path names. */
function pathTarget(path: string): Pick<Denial, "group" | "resource" | "namespace"> {
  const parts = path.split("/").filter(Boolean);
  const core = parts[0] === "api";
  let rest = parts.slice(core ? 2 : 3);
  let namespace: string | undefined;
  if (rest[0] === "namespaces" && rest.length > 2) {
    namespace = rest[1];
    rest = rest.slice(2);
  }
  const [plural = "", , subresource] = rest;
  return {
    group: core ? "" : parts[1] ?? "",
    resource: subresource === undefined ? plural : `${plural}/${subresource}`,
    ...(namespace !== undefined && { namespace }),
  };
}

/**
 * One line for a denial: `verb resource[.group][/subresource] (namespace x)`
 * or `(cluster scope)`, e.g. `patch backups.example.com/status (namespace shop)`.
 */
export function describeDenial(denial: Denial): string {
  const [plural, subresource] = denial.resource.split("/", 2) as [string, string?];
  const resource = (denial.group ? `${plural}.${denial.group}` : plural) +
    (subresource === undefined ? "" : `/${subresource}`);
  const scope = denial.namespace === undefined ? "cluster scope" : `namespace ${denial.namespace}`;
  const by = denial.policy === undefined
    ? ""
    : `, refused by ValidatingAdmissionPolicy ${denial.policy}`;
  return `${denial.verb} ${resource} (${scope}${by})`;
}

/**
 * Throws when `denials` is not empty, with a message that lists each
 * distinct denial once ("verb resource (namespace)", with how many times
 * it came), so a test under least privilege fails naming the rights
 * its rules lack. `who` names the denied one in the message.
 *
 * @throws {Error} listing the denials.
 *
 * @example
 * ```ts
 * import { assertNoDenials } from "./denials.ts";
 * assertNoDenials([]); // passes
 * ```
 */
export function assertNoDenials(denials: readonly Denial[], who = "the operator"): void {
  if (denials.length === 0) return;
  const counts = new Map<string, number>();
  for (const denial of denials) {
    const line = describeDenial(denial);
    counts.set(line, (counts.get(line) ?? 0) + 1);
  }
  const lines = [...counts].map(([line, n]) => `- ${line}${n > 1 ? ` ×${n}` : ""}`);
  throw new Error(
    `The API server denied ${who} ${denials.length} request${
      denials.length === 1 ? "" : "s"
    } (403 Forbidden) under the RBAC it was given:\n${lines.join("\n")}\n` +
      "Grant each in the operator's rules (a controller spec's `rbac` for what its reconcile " +
      "does by client), or stop the operator from asking for it; a write its ownership " +
      "policy refused was to an object it does not own (no owner label, no controller " +
      "reference to its kind).",
  );
}
