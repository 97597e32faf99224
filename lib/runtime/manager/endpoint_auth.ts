/**
 * Who may read `/metrics` and `/debug/cache`: the bearer token of the
 * request, authenticated by the API server's TokenReview and authorized by
 * its SubjectAccessReview for `get` on the path as a non-resource URL, as
 * controller-runtime's secure metrics filter does. Grant it with a
 * ClusterRole of `nonResourceURLs: ["/metrics", "/debug/cache"]`, verb
 * `get` (deploy/metrics-reader.yaml); kinglet itself needs `create` on
 * `tokenreviews` and `subjectaccessreviews`.
 *
 * What the caller must know:
 *
 * - No token, or one the API server does not know, is a 401; a known token
 *   without the right is a 403; an API server that cannot answer is a 503
 *   (a scrape fails rather than being let through).
 * - Answers are cached per token for `cacheTtlMs` (allowed) and a fifth of it
 *   (refused), at most `maxEntries` tokens, so a scrape every few seconds
 *   costs the API server two requests a minute, not two per scrape. A
 *   revoked token is thus honoured for at most `cacheTtlMs` more.
 *
 * @example
 * ```ts
 * import { tokenReviewAuth } from "./endpoint_auth.ts";
 * import { KubeClient } from "../../kube/client.ts";
 * import { staticToken } from "../../kube/token_source.ts";
 * const client = new KubeClient({
 *   server: "https://127.0.0.1:6443",
 *   auth: staticToken("kinglet"),
 *   namespace: "default",
 *   source: "example",
 * });
 * const auth = tokenReviewAuth(client);
 * const denied = await auth(new Request("http://kinglet/metrics")); // no token: no request made
 * denied?.status; // 401
 * client.close();
 * ```
 *
 * @module
 */
import { type Clock, systemClock } from "../../async/clock.ts";
import { describeError } from "../../kube/errors.ts";
import { SUBJECT_ACCESS_REVIEWS, TOKEN_REVIEWS } from "../../kube/resources.ts";
import type { KubeObject, Resource } from "../../kube/types.ts";
import { logger } from "../../log.ts";

/**
 * Decides whether `request` may be served: `undefined` lets it through, a
 * Response (401, 403, 503) is sent instead.
 */
export type EndpointAuth = (request: Request) => Promise<Response | undefined>;

/** What {@link tokenReviewAuth} needs of a client. */
export interface ReviewClient {
  /** Creates `body` (a review) and returns what the API server answered. */
  create<T extends KubeObject>(resource: Resource, body: T): Promise<T>;
}

/** Options of {@link tokenReviewAuth}. */
export interface TokenReviewAuthOptions {
  /** How long an allowed token is trusted without asking again. Defaults to 60 000 ms. */
  cacheTtlMs?: number;
  /** Tokens remembered at most; the oldest is forgotten first. Defaults to 64. */
  maxEntries?: number;
  /** Defaults to {@link systemClock}. */
  clock?: Clock;
}

interface Review extends KubeObject {
  status?: {
    authenticated?: boolean;
    allowed?: boolean;
    user?: { username?: string; uid?: string; groups?: string[]; extra?: Record<string, string[]> };
    error?: string;
  };
}

interface Verdict {
  status: 200 | 401 | 403;
  username?: string;
  until: number;
}

const log = logger("http");

/**
 * An {@link EndpointAuth} that asks the API server; see the module documentation.
 *
 * @throws {RangeError} when `cacheTtlMs` is negative or `maxEntries` is not a positive integer.
 */
export function tokenReviewAuth(
  client: ReviewClient,
  options: TokenReviewAuthOptions = {},
): EndpointAuth {
  const ttl = options.cacheTtlMs ?? 60_000;
  const max = options.maxEntries ?? 64;
  if (!(ttl >= 0) || !Number.isFinite(ttl)) {
    throw new RangeError(`Cannot protect the endpoints: 'cacheTtlMs' must be >= 0, got ${ttl}`);
  }
  if (!Number.isSafeInteger(max) || max < 1) {
    throw new RangeError(
      `Cannot protect the endpoints: 'maxEntries' must be a positive integer, got ${max}`,
    );
  }
  const clock = options.clock ?? systemClock;
  /** Insertion order is age: the first entry is the oldest. */
  const verdicts = new Map<string, Verdict>();

  async function review(token: string, path: string): Promise<Verdict> {
    const authn = await client.create<Review>(TOKEN_REVIEWS, {
      apiVersion: "authentication.k8s.io/v1",
      kind: "TokenReview",
      spec: { token },
    });
    const now = clock.now();
    const user = authn.status?.user;
    if (!authn.status?.authenticated || !user?.username) {
      return { status: 401, until: now + ttl / 5 };
    }
    const authz = await client.create<Review>(SUBJECT_ACCESS_REVIEWS, {
      apiVersion: "authorization.k8s.io/v1",
      kind: "SubjectAccessReview",
      spec: {
        user: user.username,
        ...(user.uid && { uid: user.uid }),
        ...(user.groups && { groups: user.groups }),
        ...(user.extra && { extra: user.extra }),
        nonResourceAttributes: { path, verb: "get" },
      },
    });
    const allowed = authz.status?.allowed === true;
    return {
      status: allowed ? 200 : 403,
      username: user.username,
      until: now + (allowed ? ttl : ttl / 5),
    };
  }

  return async (request) => {
    const path = new URL(request.url).pathname;
    const token = /^Bearer\s+(\S+)$/i.exec(request.headers.get("authorization") ?? "")?.[1];
    if (!token) {
      return text(401, `${path} needs a bearer token of a user allowed to get it\n`);
    }
    const key = `${path} ${token}`;
    let verdict = verdicts.get(key);
    if (!verdict || verdict.until <= clock.now()) {
      try {
        verdict = await review(token, path);
      } catch (error) {
        log.warn("Cannot review a request to {path}: {error}", {
          path,
          error: describeError(error),
        });
        return text(503, `cannot check who may get ${path} now: the API server did not answer\n`);
      }
      verdicts.delete(key);
      verdicts.set(key, verdict);
      if (verdicts.size > max) verdicts.delete(verdicts.keys().next().value!);
    }
    if (verdict.status === 200) return undefined;
    return verdict.status === 401
      ? text(401, `${path}: the API server does not know this token\n`)
      : text(403, `${path}: ${verdict.username} may not get it; grant get on this URL\n`);
  };
}

function text(status: number, body: string): Response {
  return new Response(body, {
    status,
    headers: status === 401 ? { "www-authenticate": 'Bearer realm="kinglet"' } : {},
  });
}
