/**
 * The `@kubernetes/client-node` models kinglet's operators read and write,
 * as the client returns them: {@link Wire} models, whose timestamps are the
 * RFC 3339 strings the API server sends rather than the `Date`s the models
 * declare. Types only; nothing here exists at run time.
 *
 * @example
 * ```ts
 * import type { V1Deployment } from "./models.ts";
 * const deployment: V1Deployment = { metadata: { creationTimestamp: "2026-01-01T12:00:00Z" } };
 * ```
 *
 * @module
 */
import type * as k8s from "npm:@kubernetes/client-node@2.0.1";
import type { Wire } from "../kube/mod.ts";

/** `apps/v1` Deployment. */
export type V1Deployment = Wire<k8s.V1Deployment>;
/** `apps/v1` StatefulSet. */
export type V1StatefulSet = Wire<k8s.V1StatefulSet>;
/** `v1` Service. */
export type V1Service = Wire<k8s.V1Service>;
/** `v1` Secret. */
export type V1Secret = Wire<k8s.V1Secret>;
/** Object metadata, timestamps as strings. */
export type V1ObjectMeta = Wire<k8s.V1ObjectMeta>;
/** A container's environment variable. */
export type V1EnvVar = Wire<k8s.V1EnvVar>;
/** A container's probe. */
export type V1Probe = Wire<k8s.V1Probe>;
/** A container's requests and limits. */
export type V1ResourceRequirements = Wire<k8s.V1ResourceRequirements>;
/** A pod's toleration of a taint. */
export type V1Toleration = Wire<k8s.V1Toleration>;
