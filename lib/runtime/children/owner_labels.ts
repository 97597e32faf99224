/**
 * Children anywhere: how a child that no owner reference can reach is
 * recorded to its owner, mapped back to it and deleted with it.
 *
 * An owner reference holds only within one namespace: a namespaced owner
 * cannot own a child in another namespace, nor a cluster-scoped one (the
 * garbage collector would take the owner for gone and delete the child). A
 * controller whose `owns` entry says `anywhere: true` may still apply such a
 * child: the runtime drops any owner reference to the owner from it and
 * labels it with {@link OWNER_LABELS} instead, maps its changes back to the
 * owner through those labels, and deletes every child so labelled, across
 * namespaces, before it lets the owner go (under a finalizer: the spec's, or
 * {@link childrenFinalizer} when the spec declares none).
 *
 * What the caller must know:
 *
 * - Label values hold at most 63 characters: an owner whose name is longer
 *   cannot be recorded, and its apply fails with a {@link TerminalError}.
 * - The labels name the owner, not the controller: two controllers of one
 *   primary kind that both own a kind anywhere delete each other's children
 *   of that kind when the owner goes.
 * - Only the finalizer deletes these children: an owner whose finalizer is
 *   removed by hand leaves them behind.
 *
 * @example
 * ```ts
 * import { OWNER_LABELS, ownerKind } from "./owner_labels.ts";
 * const GADGETS = {
 *   group: "example.com", version: "v1", plural: "gadgets", kind: "Gadget", namespaced: true,
 * };
 * // An owned cache that holds only the children of gadgets recorded by labels:
 * const labelSelector = `${OWNER_LABELS.kind}=${ownerKind(GADGETS)}`;
 * // "kinglet.dev/owner-kind=Gadget.example.com"
 * ```
 *
 * @module
 */
import { keyOf } from "../../kube/object_key.ts";
import type { KubeObject, ObjectKey, Resource } from "../../kube/types.ts";
import {
  type ControllerSpec,
  type Owned,
  type ReconcileClient,
  TerminalError,
} from "../controller/spec.ts";

/**
 * The labels a child elsewhere carries instead of an owner reference; all
 * three name its owner.
 *
 * @example
 * ```ts
 * import { OWNER_LABELS } from "./owner_labels.ts";
 * const child = {
 *   metadata: {
 *     name: "shop-copy", namespace: "edge",
 *     labels: {
 *       [OWNER_LABELS.kind]: "WebApp.kinglet.dev",
 *       [OWNER_LABELS.namespace]: "shop",
 *       [OWNER_LABELS.name]: "web",
 *     },
 *   },
 * };
 * child.metadata.labels["kinglet.dev/owner-name"]; // "web"
 * ```
 */
export const OWNER_LABELS = {
  /** The owner's kind and API group, as {@link ownerKind} spells them. */
  kind: "kinglet.dev/owner-kind",
  /** The owner's namespace. */
  namespace: "kinglet.dev/owner-namespace",
  /** The owner's name. */
  name: "kinglet.dev/owner-name",
} as const;

/** The longest label value the API server takes. */
const LABEL_VALUE_LIMIT = 63;
const LABEL_VALUE = /^(?:[A-Za-z0-9](?:[-A-Za-z0-9_.]*[A-Za-z0-9])?)?$/;

/**
 * The value of {@link OWNER_LABELS.kind} for owners of `primary`: `Kind.group`,
 * or `Kind` for the core group, as `kubectl` names a kind.
 *
 * @example
 * ```ts
 * import { ownerKind } from "./owner_labels.ts";
 * ownerKind({ kind: "WebApp", group: "kinglet.dev" }); // "WebApp.kinglet.dev"
 * ownerKind({ kind: "ConfigMap", group: "" }); // "ConfigMap"
 * ```
 */
export function ownerKind(primary: Pick<Resource, "kind" | "group">): string {
  return primary.group ? `${primary.kind}.${primary.group}` : primary.kind;
}

/**
 * Whether an owner reference from `desired`, a child of kind `child`, can
 * reach `owner`, of kind `primary`: the owner is cluster-scoped, or the child
 * lives in the owner's namespace (or names none, and goes there by default).
 */
export function reachedByReference(
  primary: Resource,
  owner: KubeObject,
  child: Resource,
  desired: KubeObject,
): boolean {
  if (!primary.namespaced) return true;
  if (!child.namespaced) return false;
  const namespace = desired.metadata?.namespace;
  return namespace === undefined || namespace === owner.metadata?.namespace;
}

/**
 * `desired` recorded to `owner` by {@link OWNER_LABELS}, without the owner
 * references to `owner` it may carry (the garbage collector would delete it
 * for them).
 *
 * @throws {TerminalError} when the owner's name is longer than a label value
 * may be.
 * @example
 * ```ts
 * import { withOwnerLabels } from "./owner_labels.ts";
 * import type { KubeObject } from "../../kube/types.ts";
 * const GADGETS = {
 *   group: "example.com", version: "v1", plural: "gadgets", kind: "Gadget", namespaced: true,
 * };
 * const owner = { metadata: { name: "g", namespace: "shop", uid: "6f1c" } };
 * const child = withOwnerLabels<KubeObject>(GADGETS, owner, {
 *   metadata: {
 *     name: "g-copy", namespace: "edge",
 *     ownerReferences: [{ apiVersion: "example.com/v1", kind: "Gadget", name: "g", uid: "6f1c" }],
 *   },
 * });
 * child.metadata?.ownerReferences; // undefined
 * child.metadata?.labels?.["kinglet.dev/owner-kind"]; // "Gadget.example.com"
 * ```
 */
export function withOwnerLabels<C extends KubeObject>(
  primary: Resource,
  owner: KubeObject,
  desired: C,
): C {
  const { namespace = "", name = "", uid } = owner.metadata ?? {};
  if (name.length > LABEL_VALUE_LIMIT) {
    throw new TerminalError(
      `Cannot record ${describe(desired)} to its owner ${primary.kind} ${namespace}/${name}: ` +
        `the owner's name is longer than the ${LABEL_VALUE_LIMIT} characters of the label ` +
        `${OWNER_LABELS.name}; give the owner a shorter name, or keep the child in its namespace`,
    );
  }
  const { ownerReferences, ...metadata } = desired.metadata ?? {};
  const kept = ownerReferences?.filter((reference) => reference.uid !== uid) ?? [];
  return {
    ...desired,
    metadata: {
      ...metadata,
      labels: { ...metadata.labels, ...labelsOf(primary, owner) },
      ...(kept.length > 0 && { ownerReferences: kept }),
    },
  };
}

/** The {@link OWNER_LABELS} of the children of `owner`, of kind `primary`. */
function labelsOf(primary: Resource, owner: KubeObject): Record<string, string> {
  const { namespace = "", name = "" } = owner.metadata ?? {};
  return {
    [OWNER_LABELS.kind]: ownerKind(primary),
    [OWNER_LABELS.namespace]: namespace,
    [OWNER_LABELS.name]: name,
  };
}

/** The key of the owner of `primary`'s kind that `object`'s owner labels name, if any. */
export function labelledOwnerKey(primary: Resource, object: KubeObject): ObjectKey | undefined {
  const labels = object.metadata?.labels;
  const name = labels?.[OWNER_LABELS.name];
  if (!name || labels?.[OWNER_LABELS.kind] !== ownerKind(primary)) return undefined;
  return keyOf(labels[OWNER_LABELS.namespace], name);
}

/**
 * The finalizer the runtime keeps on the owners of a spec that owns a kind
 * anywhere and declares no finalizer of its own: `<group>/children`, with
 * `kinglet.dev` for a primary of the core group.
 *
 * @example
 * ```ts
 * import { childrenFinalizer } from "./owner_labels.ts";
 * childrenFinalizer({ group: "example.com" }); // "example.com/children"
 * ```
 */
export function childrenFinalizer(primary: Pick<Resource, "group">): string {
  return `${primary.group || "kinglet.dev"}/children`;
}

/** What of a spec says which kinds it owns `anywhere`, whatever its primary's type. */
type AnywhereSpec = { owns?: readonly Pick<Owned, "resource" | "anywhere">[] | undefined };

/** The kinds `spec` owns `anywhere`. */
export function ownedAnywhere(spec: AnywhereSpec): Resource[] {
  return (spec.owns ?? []).filter((owned) => owned.anywhere).map((owned) => owned.resource);
}

/**
 * The finalizer the controller of `spec` keeps on its primaries: the spec's
 * own, else {@link childrenFinalizer} when it owns a kind `anywhere`, else
 * none.
 */
export function finalizerOf(
  spec: AnywhereSpec & { resource: Resource; finalizer?: { name: string } | undefined },
): string | undefined {
  if (spec.finalizer) return spec.finalizer.name;
  return ownedAnywhere(spec).length > 0 ? childrenFinalizer(spec.resource) : undefined;
}

/**
 * Deletes every child of the `kinds` labelled with `owner`, in any
 * namespace, listed live (the cache may be confined to one namespace). A
 * child already gone counts as deleted.
 *
 * @throws {ApiError} when the list or a delete is refused.
 */
export async function deleteLabelledChildren(
  client: Pick<ReconcileClient, "list" | "delete">,
  primary: Resource,
  owner: KubeObject,
  kinds: readonly Resource[],
  signal: AbortSignal,
): Promise<void> {
  const labelSelector = Object.entries(labelsOf(primary, owner))
    .map(([key, value]) => `${key}=${value}`)
    .join(",");
  for (const kind of kinds) {
    const { items } = await client.list(kind, { labelSelector, signal });
    for (const child of items) {
      await client.delete(kind, child.metadata?.name ?? "", {
        ...(kind.namespaced && { namespace: child.metadata?.namespace }),
        ignoreNotFound: true,
        signal,
      });
    }
  }
}

/**
 * Refuses an `owns` entry with `anywhere: true` that cannot work: under a
 * cluster-scoped primary (owner references reach every child of it), or
 * under a primary whose {@link ownerKind} is no label value.
 *
 * @throws {TypeError} naming the controller, the entry and what to write.
 */
export function checkAnywhere(spec: ControllerSpec<KubeObject>): void {
  (spec.owns ?? []).forEach((owned, i) => {
    if (!owned.anywhere) return;
    const where = `Cannot create controller '${spec.name}': owns[${i}] (${owned.resource.plural})`;
    if (!spec.resource.namespaced) {
      throw new TypeError(
        `${where} says 'anywhere: true', but ${spec.resource.plural} are cluster-scoped and ` +
          "an owner reference reaches every child of theirs; remove 'anywhere'",
      );
    }
    const kind = ownerKind(spec.resource);
    if (kind.length > LABEL_VALUE_LIMIT || !LABEL_VALUE.test(kind)) {
      throw new TypeError(
        `${where} says 'anywhere: true', but the owner kind ${JSON.stringify(kind)} is no ` +
          `label value (at most ${LABEL_VALUE_LIMIT} letters, digits, "-", "_" or "."), so ` +
          `${OWNER_LABELS.kind} cannot record it; keep those children in their owner's namespace`,
      );
    }
  });
}

function describe(object: KubeObject): string {
  const { namespace, name } = object.metadata ?? {};
  return `${object.kind ?? "the child"} ${keyOf(namespace, name ?? "(unnamed)")}`;
}
