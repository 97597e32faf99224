/**
 * The `events.k8s.io/v1` Event object and how one is built from what a
 * controller publishes, within the API server's validation limits.
 *
 * @module
 */
import type { KubeObject } from "../../kube/types.ts";
import { microTime } from "../../kube/micro_time.ts";

/** What a {@link KubeEvent} points at. */
export interface ObjectReference {
  /** `group/version` of the object's kind. */
  apiVersion?: string;
  /** The object's kind. */
  kind?: string;
  /** The object's name. */
  name?: string;
  /** The object's namespace, absent for cluster-scoped kinds. */
  namespace?: string;
  /** The object's uid. */
  uid?: string;
  /** The object's resourceVersion when the event happened. */
  resourceVersion?: string;
}

/** The repetitions of an Event. */
export interface EventSeries {
  /** How many times the event happened. */
  count: number;
  /** RFC 3339 with microseconds. */
  lastObservedTime: string;
}

/** An `events.k8s.io/v1` Event as it travels over JSON. */
export interface KubeEvent extends KubeObject {
  /** When the event first happened, as MicroTime. */
  eventTime: string;
  /** Set when the event repeated. */
  series?: EventSeries;
  /** The controller that reports, e.g. `kinglet.dev/operator`. */
  reportingController: string;
  /** The process that reports, e.g. the node and pod. */
  reportingInstance: string;
  /** What the controller did or failed to do, e.g. `Reconcile`. */
  action: string;
  /** Why, in UpperCamelCase, e.g. `InvalidSpec`. */
  reason: string;
  /** The object the event is about. */
  regarding: ObjectReference;
  /** A second object involved, e.g. a child. */
  related?: ObjectReference;
  /** For humans, at most 1 KiB. */
  note: string;
  /** `Warning` when someone should look. */
  type: "Normal" | "Warning";
}

/** What happened, for `EventRecorder.publish`. */
export interface EventInit {
  /** `Warning` for what a human should look at, else `Normal`. */
  type: "Normal" | "Warning";
  /** Why, in UpperCamelCase, e.g. `InvalidSpec`; at most 128 bytes. */
  reason: string;
  /** What was done or failed, e.g. `Reconcile`; at most 128 bytes. */
  action: string;
  /** For humans; truncated to 1 KiB. */
  note: string;
  /** A second object involved, e.g. the child that was created. */
  related?: KubeObject;
}

/** The API server's limit on `note`, in bytes. */
const NOTE_LIMIT = 1024;
/** The API server's limit on `reason`, `action` and the reporting fields, in bytes. */
export const FIELD_LIMIT = 128;
const NAME_LIMIT = 253;

/** Who reports, and the name and time of the Event to build. */
export interface EventOrigin {
  reportingController: string;
  reportingInstance: string;
  now: number;
  /** Makes names unique among Events built in the same millisecond. */
  sequence: number;
}

/**
 * Builds the Event, cutting fields to the API server's limits.
 *
 * @throws {TypeError} when the object has no name, or `reason`, `action` or `type` is unusable.
 */
export function buildEvent(regarding: KubeObject, init: EventInit, origin: EventOrigin): KubeEvent {
  const meta = regarding.metadata;
  if (!meta?.name) throw new TypeError("the object has no metadata.name");
  for (const key of ["reason", "action"] as const) {
    if (!init[key]) throw new TypeError(`'${key}' must not be empty`);
  }
  if (init.type !== "Normal" && init.type !== "Warning") {
    throw new TypeError(`'type' must be "Normal" or "Warning", got ${JSON.stringify(init.type)}`);
  }
  const event: KubeEvent = {
    apiVersion: "events.k8s.io/v1",
    kind: "Event",
    // Cluster-scoped objects get their Events in "default", as validation demands.
    metadata: { name: eventName(meta.name, origin), namespace: meta.namespace || "default" },
    eventTime: microTime(origin.now),
    reportingController: origin.reportingController,
    reportingInstance: origin.reportingInstance,
    action: truncate(init.action, FIELD_LIMIT),
    reason: truncate(init.reason, FIELD_LIMIT),
    regarding: reference(regarding),
    note: truncate(init.note, NOTE_LIMIT),
    type: init.type,
  };
  if (init.related) event.related = reference(init.related);
  return event;
}

/** client-go's `<object name>.<unix nanoseconds in hex>`, kept within the name limit. */
function eventName(objectName: string, origin: EventOrigin): string {
  const nanos = BigInt(Math.floor(origin.now)) * 1_000_000n + BigInt(origin.sequence % 1_000_000);
  const suffix = nanos.toString(16);
  const prefix = objectName.slice(0, NAME_LIMIT - 1 - suffix.length).replace(/[.-]+$/, "");
  return `${prefix}.${suffix}`;
}

/** A reference to `obj` with the fields it has. */
export function reference(obj: KubeObject): ObjectReference {
  const meta = obj.metadata ?? {};
  const ref: ObjectReference = {};
  if (obj.apiVersion) ref.apiVersion = obj.apiVersion;
  if (obj.kind) ref.kind = obj.kind;
  if (meta.name) ref.name = meta.name;
  if (meta.namespace) ref.namespace = meta.namespace;
  if (meta.uid) ref.uid = meta.uid;
  if (meta.resourceVersion) ref.resourceVersion = meta.resourceVersion;
  return ref;
}

/** `Kind namespace/name`, for log lines. */
export function describe(ref: ObjectReference): string {
  const name = ref.namespace ? `${ref.namespace}/${ref.name}` : String(ref.name);
  return `${ref.kind ?? "object"} ${name}`;
}

const encoder = new TextEncoder();

/** Length in UTF-8 bytes, the unit of the API server's limits. */
export function utf8Length(text: string): number {
  return encoder.encode(text).length;
}

/** Cuts `text` to at most `limit` UTF-8 bytes on a character boundary, marking the cut with "…". */
function truncate(text: string, limit: number): string {
  if (utf8Length(text) <= limit) return text;
  let bytes = utf8Length("…");
  let end = 0;
  for (const char of text) {
    const size = utf8Length(char);
    if (bytes + size > limit) break;
    bytes += size;
    end += char.length;
  }
  return `${text.slice(0, end)}…`;
}
