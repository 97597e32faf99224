/**
 * Admission and conversion webhooks: what an operator declares
 * ({@link AdmissionWebhook}, {@link Conversion}), how one request is decided
 * ({@link admit}, {@link convertObject}) and the HTTPS server the API server
 * calls ({@link WebhookServer}), which takes its certificate from a
 * {@link CertificateSource}. The test kit's `MemoryCluster` runs the same
 * declarations in-process.
 *
 * @example A validator and a defaulter, decided without a server
 * ```ts
 * import { admit, allowed, type AdmissionWebhook, denied } from "./mod.ts";
 * const webhook: AdmissionWebhook = {
 *   resource: { group: "example.com", version: "v1", plural: "webapps", kind: "WebApp", namespaced: true },
 *   validate: ({ object }) => (object?.spec as { replicas?: number })?.replicas === 0
 *     ? denied("replicas must not be 0")
 *     : allowed(),
 *   default: (object) => ({ ...object, spec: { replicas: 1, ...object.spec as object } }),
 * };
 * const client = { get: () => Promise.reject(new Error()), list: () => Promise.reject(new Error()) };
 * const request = {
 *   uid: "1", operation: "CREATE" as const, object: { metadata: { name: "web" }, spec: {} },
 *   namespace: "default", name: "web", userInfo: {}, dryRun: false,
 * };
 * const defaulted = await admit(webhook, "mutate", request, { client });
 * if (defaulted.patch?.[0]?.path !== "/spec/replicas") throw new Error("not defaulted");
 * ```
 *
 * @module
 */
export * from "./spec.ts";
export * from "./certificate_source.ts";
export * from "./admission.ts";
export * from "./json_patch.ts";
export * from "./conversion.ts";
export * from "./server.ts";
export * from "./certificates.ts";
export * from "./cert_store.ts";
export * from "./ca_bundle.ts";
export * from "./serving.ts";
