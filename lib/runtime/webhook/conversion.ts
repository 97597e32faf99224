/**
 * Conversion between the versions of one kind, through its hub: what the
 * webhook server answers a `ConversionReview` with, and what the test kit's
 * `MemoryCluster` runs when an object is read or written in a version other
 * than the one it is stored in.
 *
 * What the caller must know:
 *
 * - A spoke converts to another spoke through the hub (`toHub`, then
 *   `fromHub`); the hub itself converts in one step, and an object already
 *   in the desired version is returned as a copy, untouched.
 * - The conversion functions get a copy; {@link convertObject} sets
 *   `apiVersion` on what they return, and refuses a result whose metadata
 *   differs in more than labels and annotations, as the API server does.
 * - Every failure is a {@link ConversionError}; none is worth a retry, since
 *   the same object converts the same way every time.
 *
 * @example
 * ```ts
 * import { convertObject } from "./conversion.ts";
 * import { defineConversion } from "./spec.ts";
 * const conversion = defineConversion({
 *   resource: { group: "example.com", version: "v2", plural: "webapps", kind: "WebApp", namespaced: true },
 *   hub: "v2",
 *   versions: {
 *     v1: {
 *       toHub: ({ spec, ...rest }) => ({ ...rest, spec: { replicas: (spec as { size: number }).size } }),
 *       fromHub: ({ spec, ...rest }) => ({ ...rest, spec: { size: (spec as { replicas: number }).replicas } }),
 *     },
 *   },
 * });
 * const v1 = { apiVersion: "example.com/v1", kind: "WebApp", metadata: { name: "web" }, spec: { size: 2 } };
 * convertObject(conversion, v1, "example.com/v2").spec; // { replicas: 2 }
 * ```
 *
 * @module
 */
import { describeError } from "../../kube/errors.ts";
import type { KubeObject } from "../../kube/types.ts";
import { sameJson } from "../objects/same_json.ts";
import type { Conversion } from "./spec.ts";

/** Why a conversion failed. */
export type ConversionFailure =
  | "WrongGroup"
  | "UnknownVersion"
  | "ConverterFailed"
  | "MetadataChanged";

/** An object could not be converted; never retryable. */
export class ConversionError extends Error {
  /** Always `ConversionError`. */
  override readonly name = "ConversionError";
  /** Converting the same object again fails again. */
  readonly retryable = false;

  /** Carries the failure site and, for a converter that threw, its error as `cause`. */
  constructor(readonly reason: ConversionFailure, message: string, options?: ErrorOptions) {
    super(message, options);
  }
}

/**
 * `object` in `desiredApiVersion` (`group/version`), through the hub.
 *
 * @throws {ConversionError} when the object or the desired version is not of
 *   `conversion`'s kind, a converter throws, or its result changes metadata
 *   other than labels and annotations.
 */
export function convertObject(
  conversion: Conversion,
  object: KubeObject,
  desiredApiVersion: string,
): KubeObject {
  const from = versionOf(conversion, object.apiVersion ?? "", "the object's apiVersion");
  const to = versionOf(conversion, desiredApiVersion, "the desired apiVersion");
  if (from === to) return structuredClone(object);
  const name = object.metadata?.name ?? "(unnamed)";
  const step = (version: string, direction: "toHub" | "fromHub", input: KubeObject) => {
    const spoke = conversion.versions[version]!;
    let output: KubeObject;
    try {
      output = spoke[direction](structuredClone(input));
    } catch (error) {
      throw new ConversionError(
        "ConverterFailed",
        `Cannot convert ${conversion.resource.kind} ${name} ${
          direction === "toHub"
            ? `from ${version} to ${conversion.hub}`
            : `from ${conversion.hub} to ${version}`
        }: ${describeError(error)}`,
        { cause: error },
      );
    }
    const apiVersion = apiVersionOf(conversion, direction === "toHub" ? conversion.hub : version);
    return { ...output, apiVersion };
  };
  const hub = from === conversion.hub ? structuredClone(object) : step(from, "toHub", object);
  const converted = to === conversion.hub ? hub : step(to, "fromHub", hub);
  if (!sameJson(fixedMetadata(object), fixedMetadata(converted))) {
    throw new ConversionError(
      "MetadataChanged",
      `Cannot convert ${conversion.resource.kind} ${name} from ${from} to ${to}: the conversion changed metadata other than labels and annotations`,
    );
  }
  return converted;
}

/** `group/version` of `version` of `conversion`'s kind (`version` alone in the core group). */
export function apiVersionOf(conversion: Conversion, version: string): string {
  const group = conversion.resource.group;
  return group ? `${group}/${version}` : version;
}

/** Every version `conversion` knows: the hub and its spokes. */
export function conversionVersions(conversion: Conversion): string[] {
  return [conversion.hub, ...Object.keys(conversion.versions)];
}

/** The version part of `apiVersion`, checked against `conversion`'s group and versions. */
function versionOf(conversion: Conversion, apiVersion: string, what: string): string {
  const slash = apiVersion.lastIndexOf("/");
  const group = slash === -1 ? "" : apiVersion.slice(0, slash);
  const version = apiVersion.slice(slash + 1);
  const kind = conversion.resource.kind;
  if (group !== conversion.resource.group) {
    throw new ConversionError(
      "WrongGroup",
      `Cannot convert ${kind}: ${what} ${JSON.stringify(apiVersion)} is not in group ${
        JSON.stringify(conversion.resource.group)
      }`,
    );
  }
  if (!conversionVersions(conversion).includes(version)) {
    throw new ConversionError(
      "UnknownVersion",
      `Cannot convert ${kind}: ${what} ${
        JSON.stringify(apiVersion)
      } names no version of ${kind} (known: ${conversionVersions(conversion).join(", ")})`,
    );
  }
  return version;
}

/** The metadata a conversion must keep: all of it but labels and annotations. */
function fixedMetadata(object: KubeObject): unknown {
  const { labels: _l, annotations: _a, ...rest } = object.metadata ?? {};
  return rest;
}
