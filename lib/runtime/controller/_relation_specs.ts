/**
 * What a spec declares about its relations, checked at registration and
 * turned into the functions the stores' listeners call: each entry's map
 * (its `map`, or its `index` of the primary cache looked up by the changed
 * object's key) and the primary's indexes, both reporting a throw to
 * {@link RelationErrors} instead of stopping the store.
 *
 * @module
 */
import { objectKey } from "../../kube/object_key.ts";
import { resourceId } from "../../kube/resources.ts";
import type { KubeObject, ObjectKey } from "../../kube/types.ts";
import type { RelationErrors } from "./_relation_errors.ts";
import type { ControllerSpec, PrimaryView, Watch } from "./spec.ts";

type Spec = ControllerSpec<KubeObject>;

/**
 * The map of the `owns` or `watches` entry at `where` (e.g. `watches[0]`):
 * its `map` given the primary view, or the keys its `index` holds under the
 * changed object's key; `undefined` when it names neither.
 *
 * @throws {TypeError} naming the spec and entry when it names both, or an
 * index the spec's `indexes` does not declare.
 */
export function entryMap(
  spec: Spec,
  entry: Watch<KubeObject>,
  where: string,
  primary: PrimaryView<KubeObject>,
): ((object: KubeObject) => ObjectKey[]) | undefined {
  const { map, index } = entry;
  if (map && index !== undefined) {
    throw new TypeError(
      `Cannot create controller '${spec.name}': ${where} gives both 'map' and 'index'; ` +
        "keep one ('index' is short for a map that looks the object's key up in that index)",
    );
  }
  if (map) return (object) => map(object, primary);
  if (index === undefined) return undefined;
  if (!Object.hasOwn(spec.indexes ?? {}, index)) {
    const known = Object.keys(spec.indexes ?? {}).map((name) => `'${name}'`).join(", ");
    throw new TypeError(
      `Cannot create controller '${spec.name}': ${where} maps by index '${index}', which its ` +
        `'indexes' does not declare (${known ? `declared: ${known}` : "it declares none"}); ` +
        `add indexes: { ${index}: (primary) => [...] } to the spec, or name a declared one`,
    );
  }
  return (object) => primary.byIndex(index, objectKey(object));
}

/**
 * The spec's indexes, each reporting a throw to `errors` with the primary's
 * key and indexing that object under nothing, so that one bad object does
 * not stop its cache.
 */
export function guardedIndexes(
  spec: Spec,
  errors: RelationErrors,
): Record<string, (object: KubeObject) => readonly string[]> | undefined {
  if (!spec.indexes) return undefined;
  const guarded: Record<string, (object: KubeObject) => readonly string[]> = {};
  for (const [name, index] of Object.entries(spec.indexes)) {
    guarded[name] = (object) => {
      try {
        return index(object);
      } catch (error) {
        errors.failed("index", spec.resource.plural, keyOf(object), error, name);
        return [];
      }
    };
  }
  return guarded;
}

function keyOf(object: KubeObject): ObjectKey | undefined {
  try {
    return objectKey(object);
  } catch {
    return undefined;
  }
}

/**
 * Refuses a spec that caches one kind twice among `owns` and `watches`:
 * `context.cache(kind)` could not say which cache it means.
 *
 * @throws {TypeError} naming the controller, the kind and what to write instead.
 */
export function refuseAmbiguousCaches(spec: Spec): void {
  const seen = new Map<string, string>();
  const entries = [
    ...(spec.owns ?? []).map((w, i) => ({ w, where: `owns[${i}]` })),
    ...(spec.watches ?? []).map((w, i) => ({ w, where: `watches[${i}]` })),
  ];
  for (const { w, where } of entries) {
    const id = resourceId(w.resource);
    const first = seen.get(id);
    if (first === undefined) {
      seen.set(id, where);
      continue;
    }
    throw new TypeError(
      `Cannot create controller '${spec.name}': ${where} caches ${w.resource.plural} again ` +
        `after ${first}, so context.cache(${w.resource.plural}) could not tell the two apart; ` +
        "keep one entry (an 'owns' entry takes a 'map' too, and a 'labelSelector' or " +
        "'transform' of its own)",
    );
  }
}
