/**
 * What a request path is about, as the API server's RBAC authorizer reads it
 * (its `RequestInfo`): the API group, the resource (with its subresource),
 * the namespace and the name. The inverse of `resourcePath` in resources.ts,
 * for paths kinglet's client sends and paths the API server serves.
 *
 * @module
 */

/** What a request is about, read from its path: what RBAC authorizes it on. */
export interface RequestTarget {
  /** The API group; `""` is the core group. */
  group: string;
  /** The plural, or `plural/subresource` (`backups/status`), as RBAC rules name it. */
  resource: string;
  /** The namespace in the path; absent for a cluster-scoped or all-namespaces request. */
  namespace?: string;
  /** The object's name; absent for a request on the collection. */
  name?: string;
}

/** What follows `/namespaces/<name>/` and is a subresource of the Namespace, not a resource in it. */
const NAMESPACE_SUBRESOURCES = new Set(["status", "finalize"]);

/**
 * The target of `path` (a query is ignored), or `undefined` for a path
 * outside the resource API: discovery (`/api`, `/apis/<group>`), `/version`,
 * `/openapi/...`, `/healthz`.
 */
export function requestTarget(path: string): RequestTarget | undefined {
  const parts = path.split("?", 1)[0]!.split("/").filter((part) => part !== "").map(decode);
  let group: string;
  let rest: string[];
  if (parts[0] === "api" && parts.length >= 3) {
    group = "";
    rest = parts.slice(2);
  } else if (parts[0] === "apis" && parts.length >= 4) {
    group = parts[1]!;
    rest = parts.slice(3);
  } else {
    return undefined;
  }
  let namespace: string | undefined;
  if (rest[0] === "namespaces" && rest.length >= 2) {
    namespace = rest[1];
    if (rest.length >= 3 && !NAMESPACE_SUBRESOURCES.has(rest[2]!)) rest = rest.slice(2);
  }
  const [plural, name, subresource] = rest as [string, string?, string?];
  return {
    group,
    resource: subresource === undefined ? plural : `${plural}/${subresource}`,
    ...(namespace !== undefined && { namespace }),
    ...(name !== undefined && { name }),
  };
}

function decode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}
