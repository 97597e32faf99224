/**
 * The in-memory API server's webhooks: a kind's admission (defaulting, then
 * validation) on each write, and its conversion between the version a
 * request names and the version objects are stored in, run in-process
 * through the same {@link admit} and {@link convertObject} the webhook server
 * answers with.
 *
 * As the API server does, admission sees the object in the version its
 * webhook declares (converted there and back when the kind has a
 * conversion), a defaulter's patch is applied before validation, and a
 * denial is the API server's error: `admission webhook "<name>" denied the
 * request: <message>`, with the code the handler gave (403 by default).
 *
 * @module
 */
import { ApiError } from "../kube/errors.ts";
import { resourceName, resourcePath } from "../kube/resources.ts";
import type { KubeObject, Resource } from "../kube/types.ts";
import {
  type AdmissionKind,
  type AdmissionRequest,
  type AdmissionWebhook,
  admit,
  apiVersionOf,
  type Conversion,
  ConversionError,
  convertObject,
  type Operation,
  type WebhookClient,
  webhookName,
} from "../runtime/webhook/mod.ts";
import { jsonPatch } from "./_patches.ts";

/** What the in-memory API server is told to call: admission and conversion entries, mixed. */
export type InProcessWebhook = AdmissionWebhook | Conversion;

/** One write, as admission sees it. */
export interface AdmittedWrite {
  operation: Operation;
  /** The object as it would be stored, in the request's version; absent on DELETE. */
  object?: KubeObject;
  /** The stored object, in the request's version; on UPDATE and DELETE. */
  oldObject?: KubeObject;
  /** The HTTP verb and path the refusal names. */
  verb: string;
  path: string;
  dryRun?: boolean;
}

/** A kind's webhooks by resource name (`plural.group`), run in-process. */
export class InProcessWebhooks {
  readonly #admission = new Map<string, AdmissionWebhook>();
  readonly #conversions = new Map<string, Conversion>();
  readonly #client: WebhookClient;

  /**
   * Sorts `entries` by kind.
   *
   * @throws {TypeError} when two entries of one sort name the same kind.
   */
  constructor(entries: readonly InProcessWebhook[], client: WebhookClient) {
    this.#client = client;
    for (const entry of entries) {
      const byKind = "hub" in entry ? this.#conversions : this.#admission;
      const id = resourceName(entry.resource);
      if (byKind.has(id)) {
        throw new TypeError(
          `Cannot create the MemoryCluster: 'webhooks' holds two ${
            "hub" in entry ? "conversions" : "admission webhooks"
          } of ${entry.resource.plural}.${entry.resource.group}`,
        );
      }
      (byKind as Map<string, InProcessWebhook>).set(id, entry);
    }
  }

  /** Whether writes of `resource` go through admission. */
  admits(resource: Resource): boolean {
    return this.#admission.has(resourceName(resource));
  }

  /** The hub of `resource`'s conversion, or `undefined` when it has none. */
  hub(resource: Resource): string | undefined {
    return this.#conversions.get(resourceName(resource))?.hub;
  }

  /**
   * `object` in `version` of `resource`'s kind; as it is when the kind has no
   * conversion or the object is in that version already.
   *
   * @throws {ApiError} 500 when the conversion fails, as the API server answers it.
   */
  convert<T extends KubeObject>(resource: Resource, object: T, version: string): T {
    const conversion = this.#conversions.get(resourceName(resource));
    if (!conversion) return object;
    const apiVersion = apiVersionOf(conversion, version);
    if (object.apiVersion === apiVersion) return object;
    try {
      return convertObject(conversion, object, apiVersion) as T;
    } catch (error) {
      if (!(error instanceof ConversionError)) throw error;
      throw new ApiError({
        status: 500,
        reason: "InternalError",
        message: `conversion webhook for ${
          apiVersionOf(conversion, resource.version)
        }, Kind=${resource.kind} failed: ${error.message}`,
        verb: "GET",
        path: resourcePath(resource, {
          ...(object.metadata?.namespace && { namespace: object.metadata.namespace }),
          ...(object.metadata?.name && { name: object.metadata.name }),
        }),
      });
    }
  }

  /**
   * The object to store after `resource`'s defaulter and validator have run
   * on `write` (`write.object` itself when the kind has no admission webhook).
   *
   * @throws {ApiError} the API server's refusal when a handler denies the write.
   */
  async admit(resource: Resource, write: AdmittedWrite): Promise<KubeObject | undefined> {
    const webhook = this.#admission.get(resourceName(resource));
    if (!webhook) return write.object;
    const version = webhook.resource.version;
    const inVersion = (o: KubeObject | undefined) => o && this.convert(resource, o, version);
    const object = inVersion(write.object);
    const metadata = write.object?.metadata ?? write.oldObject?.metadata ?? {};
    const request: AdmissionRequest = {
      uid: crypto.randomUUID(),
      operation: write.operation,
      ...(object && { object }),
      ...(write.oldObject && { oldObject: inVersion(write.oldObject) }),
      namespace: metadata.namespace ?? "",
      name: metadata.name ?? "",
      userInfo: { username: "memory-cluster" },
      dryRun: write.dryRun ?? false,
    };
    const decide = async (kind: AdmissionKind) => {
      const outcome = await admit(webhook, kind, request, { client: this.#client });
      if (outcome.allowed) return outcome;
      throw new ApiError({
        status: outcome.code ?? 403,
        message: `admission webhook "${webhookName(kind, webhook.resource)}" denied the request: ${
          outcome.message ?? "denied"
        }`,
        verb: write.verb,
        path: write.path,
      });
    };
    if (webhook.default && request.object) {
      const { patch } = await decide("mutate");
      if (patch) request.object = jsonPatch(request.object, patch) as KubeObject;
    }
    if (webhook.validate) await decide("validate");
    const requested = write.object?.apiVersion?.split("/").pop();
    return request.object && requested
      ? this.convert(resource, request.object, requested)
      : request.object;
  }
}
