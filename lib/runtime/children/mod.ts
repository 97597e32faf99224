/**
 * The children of a controller: the {@link ChildApplier} that writes them
 * and skips a child already as it would write it, and the owner labels
 * ({@link OWNER_LABELS}) that record a child no owner reference can reach
 * (another namespace, or cluster-scoped) to its owner. A reconcile reaches
 * them through its context's `children`; the controller wires them.
 *
 * @example
 * ```ts
 * import { OWNER_LABELS, ownerKind } from "./mod.ts";
 * const selector = `${OWNER_LABELS.kind}=${ownerKind({ kind: "WebApp", group: "kinglet.dev" })}`;
 * // "kinglet.dev/owner-kind=WebApp.kinglet.dev"
 * ```
 *
 * @module
 */
export { ChildApplier } from "./child_applier.ts";
export { OWNER_LABELS, ownerKind } from "./owner_labels.ts";
