/**
 * What a zod schema checks beyond what `z.toJSONSchema` writes into a CRD.
 *
 * `z.toJSONSchema` (OpenAPI 3.0 target) leaves out a record's key schema,
 * regex flags, refinements and transforms without a word, and writes several
 * patterns on one string as an `allOf`, which a structural schema forbids.
 * {@link carryConstraints} walks the zod schema and its JSON Schema side by
 * side and, where the API server can enforce a constraint, writes it in a
 * form it accepts:
 *
 * - a record's key constraints: a CEL rule `self.all(k, ...)` on the map;
 *   keys from an enum or literals: the map becomes an object with those
 *   properties (required unless the record is partial);
 * - regex flags `i`, `m` and `s`: the pattern's inline flags, `(?i)...`;
 * - a second pattern on one string: a CEL rule `self.matches(...)`;
 * - a string format the API server does not know: dropped (it would only
 *   warn), the pattern zod writes beside it does the checking.
 *
 * Where it cannot (a refinement, a transform, a format with no pattern, a
 * `.pipe()` target's checks, a pattern RE2 cannot read, which would make
 * the API server refuse the CRD), it reports an {@link UnenforcedConstraint}
 * with the path and what to do. A refinement on a node that states CEL
 * rules or `minProperties`/`maxProperties` with `.meta()` counts as
 * expressed by them: that is how an author says the API server enforces it.
 *
 * @module
 */
import { z } from "npm:zod@4.6.7";
import type { JsonSchema, UnenforcedConstraint } from "./types.ts";

/** The part of zod v4's internals this module reads. */
interface Zod {
  readonly _zod: {
    readonly def: ZodDef;
    readonly traits: Set<string>;
    readonly values?: Set<unknown>;
  };
}

interface ZodDef {
  readonly type: string;
  readonly checks?: readonly Zod[];
  readonly innerType?: Zod;
  readonly in?: Zod;
  readonly out?: Zod;
  readonly shape?: Readonly<Record<string, Zod>>;
  readonly element?: Zod;
  readonly keyType?: Zod;
  readonly valueType?: Zod;
  readonly check?: string;
  readonly format?: string;
  readonly pattern?: RegExp;
  readonly error?: (issue: unknown) => unknown;
  /** Set on a codec, whose `out` is the decoded type. */
  readonly transform?: unknown;
}

/** Wrappers whose JSON Schema is their inner schema's, with a default or `nullable` at most. */
const WRAPPERS = new Set([
  "optional",
  "nullable",
  "default",
  "prefault",
  "readonly",
  "nonoptional",
  "catch",
]);

/**
 * The string formats the API server validates (apiextensions' supported
 * formats); it accepts any other with a warning and checks nothing.
 */
const KUBERNETES_FORMATS = new Set([
  "bsonobjectid",
  "uri",
  "email",
  "hostname",
  "ipv4",
  "ipv6",
  "cidr",
  "mac",
  "uuid",
  "uuid3",
  "uuid4",
  "uuid5",
  "isbn",
  "isbn10",
  "isbn13",
  "creditcard",
  "ssn",
  "hexcolor",
  "rgbcolor",
  "byte",
  "password",
  "date",
  "duration",
  "datetime",
  "date-time",
]);

const CEL_ADVICE = 'state it beside the check with .meta({ "x-kubernetes-validations": ' +
  "[{ rule, message }] }), a CEL rule the API server enforces, or check it in the reconcile " +
  "and report it in status";

/**
 * Writes into `json` (the JSON Schema zod made of `schema`, input side) what
 * the CRD can carry of `schema`'s other constraints, and returns those it
 * cannot, each at its path under `path` (e.g. `.spec`).
 */
export function carryConstraints(
  schema: unknown,
  json: JsonSchema,
  path: string,
): UnenforcedConstraint[] {
  const unenforced: UnenforcedConstraint[] = [];
  walk(schema as Zod, json, path, unenforced, declaresRules(json));
  return unenforced;
}

function walk(
  schema: Zod,
  json: JsonSchema,
  path: string,
  out: UnenforcedConstraint[],
  declared: boolean,
): void {
  const def = schema._zod.def;
  refinements(schema, path, out, declared);
  if (WRAPPERS.has(def.type) && def.innerType) {
    walk(def.innerType, json, path, out, declared);
    return;
  }
  if (def.type === "pipe" && def.in && def.out) {
    pipeTarget(def, path, out);
    walk(def.in, json, path, out, declared);
    return;
  }
  if (def.type === "string") strings(schema, json, path, out);
  if (def.type === "object" && def.shape) {
    const properties = (json.properties ?? {}) as Record<string, JsonSchema>;
    for (const [name, child] of Object.entries(def.shape)) {
      const node = properties[name];
      if (node) walk(child, node, `${path}.${name}`, out, declaresRules(node));
    }
  }
  if (def.type === "array" && def.element && isSchema(json.items)) {
    walk(def.element, json.items, `${path}[]`, out, declaresRules(json.items));
  }
  if (def.type === "record" && def.keyType && def.valueType) record(def, json, path, out);
}

/** Whether the author stated rules on this node that a refinement may be the twin of. */
function declaresRules(json: JsonSchema): boolean {
  return ["x-kubernetes-validations", "minProperties", "maxProperties"].some((key) => key in json);
}

function pipeTarget(pipe: ZodDef, path: string, out: UnenforcedConstraint[]): void {
  const type = pipe.out!._zod.def.type;
  if (type === "transform" || pipe.transform !== undefined) {
    out.push({
      path,
      constraint: type === "transform" ? "a .transform()" : "a codec's decoding",
      advice: "the API server stores the value as written and the reconcile reads it " +
        "untransformed, though the spec type says otherwise: transform it in the reconcile",
    });
  } else if (type !== "unknown" && type !== "any") {
    out.push({
      path,
      constraint: "the checks of a .pipe() target",
      advice: "the CRD carries the input schema only: move the checks onto it",
    });
  }
}

function refinements(
  schema: Zod,
  path: string,
  out: UnenforcedConstraint[],
  declared: boolean,
): void {
  for (const check of schema._zod.def.checks ?? []) {
    const def = check._zod.def;
    if (def.check === "custom" && !declared) {
      const message = refinementMessage(def);
      out.push({
        path,
        constraint: `a refinement${message === undefined ? "" : ` (${JSON.stringify(message)})`}`,
        advice: schema._zod.def.type === "record"
          ? `${CEL_ADVICE}; for a map that must not be empty, .meta({ minProperties: 1 })`
          : CEL_ADVICE,
      });
    } else if (def.check === "overwrite") {
      out.push({
        path,
        constraint: "an overwrite (.trim(), .toLowerCase(), .toUpperCase(), .normalize())",
        advice: "the API server stores the value as written: refuse other values with a " +
          ".regex() instead (e.g. /^\\S(.*\\S)?$/ for trimmed), or normalise it in the reconcile",
      });
    }
  }
}

function refinementMessage(def: ZodDef): string | undefined {
  try {
    const message = def.error?.({ code: "custom", input: undefined });
    return typeof message === "string" ? message : undefined;
  } catch {
    return undefined;
  }
}

/** Flags on patterns, a second pattern, a format the API server does not know. */
function strings(schema: Zod, json: JsonSchema, path: string, out: UnenforcedConstraint[]): void {
  const format = typeof json.format === "string" ? json.format : undefined;
  const known = format !== undefined && KUBERNETES_FORMATS.has(format);
  const all = patternsOf(schema, json);
  // A known format checks what a pattern it comes with says, near enough, so a pattern RE2
  // cannot read goes without a word there.
  const patterns = readable(all, path, known ? [] : out);
  delete json.allOf;
  delete json.pattern;
  const [first, ...rest] = patterns;
  if (first !== undefined) json.pattern = first;
  if (rest.length > 0) {
    addRules(
      json,
      rest.map((pattern) => ({
        rule: `self.matches(${celString(pattern)})`,
        message: `must match ${pattern}`,
      })),
    );
  }
  if (format === undefined || known) return;
  delete json.format;
  if (all.length === 0) out.push(formatGap(format, path));
}

/**
 * The patterns RE2 can read; each other one is reported: the API server
 * compiles `pattern` and CEL's `matches` with RE2 and refuses a CRD whose
 * pattern it cannot compile.
 */
function readable(patterns: string[], path: string, out: UnenforcedConstraint[]): string[] {
  return patterns.filter((pattern) => {
    const missing = re2Lacks(pattern);
    if (missing === undefined) return true;
    out.push({
      path,
      constraint: `the pattern ${pattern}`,
      advice: `the API server reads patterns with RE2, which has no ${missing}, and would refuse ` +
        "the CRD: write it without them, or check it in the reconcile",
    });
    return false;
  });
}

/** What of JavaScript's regular expressions `pattern` uses that RE2 lacks, if anything. */
function re2Lacks(pattern: string): string | undefined {
  let inClass = false;
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === "\\") {
      const next = pattern.slice(i + 1, i + 3);
      if (!inClass && (/^[1-9]/.test(next) || next === "k<")) return "backreferences";
      i++;
    } else if (inClass) {
      if (c === "]") inClass = false;
    } else if (c === "[") {
      inClass = true;
    } else if (c === "(" && pattern[i + 1] === "?") {
      const kind = pattern.slice(i + 2, i + 4);
      if (kind[0] === "=" || kind[0] === "!") return "lookahead";
      if (kind === "<=" || kind === "<!") return "lookbehind";
    }
  }
  return undefined;
}

/**
 * The string's patterns as the API server should read them: zod's `pattern`
 * or `allOf` of patterns, each with its regex flags inline (Go's RE2, which
 * checks `pattern`, reads `(?i)`, `(?m)` and `(?s)`).
 */
function patternsOf(schema: Zod, json: JsonSchema): string[] {
  const flagged = new Map<string, string>();
  const def = schema._zod.def;
  const checks = schema._zod.traits.has("$ZodCheck") ? [schema, ...def.checks ?? []] : [
    ...def.checks ?? [],
  ];
  for (const check of checks) {
    const pattern = check._zod.def.pattern;
    if (!(pattern instanceof RegExp)) continue;
    const flags = [...pattern.flags].filter((flag) => "ims".includes(flag)).join("");
    if (flags !== "") flagged.set(pattern.source, `(?${flags})${pattern.source}`);
  }
  const sources: string[] = [];
  if (typeof json.pattern === "string") sources.push(json.pattern);
  for (const part of Array.isArray(json.allOf) ? json.allOf as JsonSchema[] : []) {
    if (typeof part.pattern === "string") sources.push(part.pattern);
  }
  return sources.map((source) => flagged.get(source) ?? source);
}

function formatGap(format: string, path: string): UnenforcedConstraint {
  return {
    path,
    constraint: `the string format ${format}`,
    advice: "the API server does not know this format and checks nothing: add a .regex() the " +
      "CRD carries, or check it in the reconcile",
  };
}

/** A record's keys: an object's properties for enum keys, a CEL rule for constrained ones. */
function record(def: ZodDef, json: JsonSchema, path: string, out: UnenforcedConstraint[]): void {
  const key = unwrap(def.keyType!);
  const value = def.valueType!;
  const values = key._zod.values;
  const additional = json.additionalProperties;
  if (values && [...values].every((v) => typeof v === "string") && isSchema(additional)) {
    delete json.additionalProperties;
    const properties: Record<string, JsonSchema> = {};
    for (const name of values as Set<string>) {
      const node = structuredClone(additional);
      walk(value, node, `${path}.${name}`, out, declaresRules(node));
      properties[name] = node;
    }
    json.properties = properties;
    return;
  }
  keyRule(key, json, path, out);
  if (isSchema(additional)) walk(value, additional, `${path}{}`, out, declaresRules(additional));
}

function unwrap(schema: Zod): Zod {
  const def = schema._zod.def;
  if (WRAPPERS.has(def.type) && def.innerType) return unwrap(def.innerType);
  if (def.type === "pipe" && def.in) return unwrap(def.in);
  return schema;
}

/** The key schema's lengths and patterns as one CEL rule on the map. */
function keyRule(key: Zod, json: JsonSchema, path: string, out: UnenforcedConstraint[]): void {
  const keyPath = `${path} (keys)`;
  refinements(key, keyPath, out, declaresRules(json));
  if (key._zod.def.type !== "string") return;
  const keyJson = z.toJSONSchema(key as unknown as z.ZodType, {
    target: "openapi-3.0",
    io: "input",
  }) as JsonSchema;
  const conditions: string[] = [];
  const words: string[] = [];
  const { format } = keyJson;
  const min = typeof keyJson.minLength === "number" && keyJson.minLength > 0
    ? keyJson.minLength
    : undefined;
  const max = typeof keyJson.maxLength === "number" ? keyJson.maxLength : undefined;
  if (min !== undefined) conditions.push(`size(k) >= ${min}`);
  if (max !== undefined) conditions.push(`size(k) <= ${max}`);
  if (min !== undefined || max !== undefined) {
    words.push(
      min === undefined
        ? `be at most ${max} characters long`
        : max === undefined
        ? `be at least ${min} characters long`
        : `be ${min} to ${max} characters long`,
    );
  }
  const all = patternsOf(key, keyJson);
  const patterns = readable(all, keyPath, out);
  for (const pattern of patterns) {
    conditions.push(`k.matches(${celString(pattern)})`);
    words.push(`match ${pattern}`);
  }
  if (typeof format === "string" && all.length === 0) out.push(formatGap(format, keyPath));
  if (conditions.length === 0) return;
  addRules(json, [{
    rule: `self.all(k, ${conditions.join(" && ")})`,
    message: `every key must ${words.join(" and ")}`,
  }]);
}

function addRules(json: JsonSchema, rules: { rule: string; message: string }[]): void {
  const existing = Array.isArray(json["x-kubernetes-validations"])
    ? json["x-kubernetes-validations"] as unknown[]
    : [];
  json["x-kubernetes-validations"] = [...existing, ...rules];
}

/** A CEL string literal: JSON's escapes (`\\`, `\"`, `\n`, `\uXXXX`) are CEL's too. */
function celString(value: string): string {
  return JSON.stringify(value);
}

/** Whether `value` is a schema node: an object, not an array (structural.ts asks too). */
export function isSchema(value: unknown): value is JsonSchema {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
