/**
 * What the harness measures: a target file (JSON) says how to start an
 * operator, which CRDs it needs, what object to create, how to update it,
 * and when it counts as ready. kinglet is the default target
 * (`bench/targets/kinglet.json`); any operator can be measured the same way
 * with a file of its own.
 *
 * Command arguments may hold placeholders: `{deno}` (the Deno running the
 * harness), `{kubeconfig}`, `{metricsPort}`, `{probePort}`, `{namespace}`,
 * and the optional `{v8Flags}` (comma-joined), `{concurrency}`,
 * `{cacheMaxObjects}` and `{webhookPort}`. An argument that mentions an optional placeholder
 * with no value is left out, so `--cache-max-objects={cacheMaxObjects}`
 * appears only in the budget scenario. The object template may use `{name}`,
 * `{namespace}`, `{index}` and `{replicas}`; a string that is exactly one
 * placeholder becomes its value with its type, so `"replicas": "{replicas}"`
 * is a number.
 *
 * The measured kind's scope comes from its CRD among `crds`, read when the
 * target is loaded or, for a target whose build writes its CRDs, once it is
 * built: objects of a cluster-scoped kind are created, listed, patched and
 * deleted without a namespace (a `metadata.namespace` in the template is
 * dropped), while `{namespace}` still names the run's namespace wherever
 * else it appears.
 *
 * An optional `build` command (placeholder `{deno}`) runs once in `cwd`
 * before the target's first run: kinglet's bundles main.ts, so that every
 * benchmark measures the sources checked out.
 *
 * A target that serves an admission webhook has `{webhookPort}` in its
 * command (the harness picks a free loopback port per run) and
 * `webhookConfigurations`: YAML files, relative to `cwd`, of the webhook
 * configurations that call it at `https://127.0.0.1:{webhookPort}`, applied
 * after the CRDs and before the operator starts, so that it can inject its
 * CA bundle into them. Only such a target runs the admission scenario.
 *
 * An optional `leaderElection` says how to run the target as one of two
 * candidates for a Lease, which the failover scenario needs: `args` are
 * appended to the command of each candidate, with `{id}` (the candidate's
 * identity, `bench-a` or `bench-b`) and `{namespace}` filled in, and `lease`
 * names the Lease those arguments make the candidates contend for (its
 * namespace may be `{namespace}`, the run's). A target without it is left out
 * of failover.
 *
 * @example
 * ```ts ignore
 * import { expandCommand, loadTarget } from "./target.ts";
 * const target = await loadTarget("kinglet");
 * expandCommand(target, { kubeconfig: "/tmp/k", metricsPort: 8080, probePort: 8081, namespace: "bench" });
 * ```
 *
 * @module
 */
import { dirname, isAbsolute, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseAllDocuments } from "yaml";
import { z } from "zod";
import type { KubeObject, Resource } from "../../lib/kube/types.ts";
import { type ReadyRule, readyRuleSchema } from "../measure/ready_rule.ts";
import { runQuiet } from "./run_quiet.ts";
import { SCENARIO_NAMES, type ScenarioName } from "../measure/results.ts";

const OPTIONAL = ["v8Flags", "concurrency", "cacheMaxObjects", "webhookPort"] as const;
const REQUIRED = ["deno", "kubeconfig", "metricsPort", "probePort", "namespace"] as const;
const OBJECT_PLACEHOLDERS = ["name", "namespace", "index", "replicas"] as const;
const CANDIDATE_PLACEHOLDERS = ["id", "namespace"] as const;
const PLACEHOLDER = /\{([a-zA-Z0-9]+)\}/g;

/** A setting a target may or may not accept, found by its placeholder in the command. */
export type TargetKnob = typeof OPTIONAL[number];

const targetFileSchema = z.object({
  name: z.string().min(1),
  description: z.string().optional(),
  /** The scenarios the target can run; all of them by default. */
  scenarios: z.array(z.string()).min(1).optional(),
  /** Folder the command runs in, relative to the target file. Defaults to the file's folder. */
  cwd: z.string().optional(),
  command: z.array(z.string()).min(1),
  /** Run once in `cwd` before the target's first run; `{deno}` is the only placeholder. */
  build: z.array(z.string()).min(1).optional(),
  env: z.record(z.string(), z.string()).optional(),
  /** The V8 flags the target's users run it with; the variant `default` means exactly these. */
  defaultV8Flags: z.array(z.string()).optional(),
  /** CRD files, relative to `cwd`, server-side applied before the operator starts. */
  crds: z.array(z.string()).min(1),
  /**
   * Plural of the measured kind; group, version and kind come from the object
   * template, its scope from its CRD among `crds`.
   */
  plural: z.string().min(1),
  object: z.record(z.string(), z.unknown()),
  /** A JSON merge patch: a tenth of the objects get it in the update step, one in restart's edit. */
  update: z.record(z.string(), z.unknown()),
  ready: readyRuleSchema,
  readyzPath: z.string().default("/readyz"),
  metricsPath: z.string().default("/metrics"),
  /** Webhook configuration files, relative to `cwd`; placeholder `{webhookPort}`. */
  webhookConfigurations: z.array(z.string()).min(1).optional(),
  /** How to run two candidates for a Lease; see the module documentation. */
  leaderElection: z.object({
    args: z.array(z.string()).min(1),
    lease: z.object({ namespace: z.string().min(1), name: z.string().min(1) }),
  }).optional(),
});

/** How a target runs as a candidate for a Lease, and which Lease. */
export interface LeaderElection {
  /** Appended to the command of each candidate; placeholders `{id}` and `{namespace}`. */
  args: string[];
  /** The Lease the candidates contend for; `namespace` may be `{namespace}`, the run's. */
  lease: { namespace: string; name: string };
}

/** A loaded target with absolute paths. */
export interface Target {
  name: string;
  description?: string;
  /** The target file. */
  file: string;
  /**
   * The scenarios it can run. A program that reconciles nothing, such as the
   * Deno floor (`bench/targets/deno-floor.json`), runs only `idle`, and is left
   * out of the others when it runs side by side.
   */
  scenarios: readonly ScenarioName[];
  cwd: string;
  command: string[];
  /** The build command with `{deno}` filled in, when the target has one. */
  build?: string[];
  env: Record<string, string>;
  defaultV8Flags: string[];
  crds: string[];
  /**
   * The measured kind; `namespaced` is its CRD's scope, settled at load or,
   * when the build writes the CRDs, by {@link buildTarget}.
   */
  resource: Resource;
  object: Record<string, unknown>;
  update: Record<string, unknown>;
  ready: ReadyRule;
  readyzPath: string;
  metricsPath: string;
  /** Present when the target can run the failover scenario. */
  leaderElection?: LeaderElection;
  /**
   * The webhook configurations that call the target at its `{webhookPort}`,
   * absolute; present when the target can run the admission scenario.
   */
  webhookConfigurations?: string[];
}

/** Values for the command's placeholders. */
export interface LaunchValues {
  kubeconfig: string;
  metricsPort: number;
  probePort: number;
  namespace: string;
  v8Flags?: readonly string[];
  concurrency?: number;
  cacheMaxObjects?: number;
  /** The port the target's webhook listens on, for a target with `{webhookPort}`. */
  webhookPort?: number;
  /** The identity of a leader-election candidate: appends the target's `leaderElection.args`. */
  candidate?: string;
}

/**
 * Loads `kinglet` (or another name under `bench/targets/`) or a path to a
 * target file, and checks it.
 *
 * @throws {TypeError} when the file is not a valid target, naming the field.
 */
export async function loadTarget(nameOrPath: string): Promise<Target> {
  const file = /^[a-z0-9-]+$/.test(nameOrPath)
    ? fileURLToPath(new URL(`../targets/${nameOrPath}.json`, import.meta.url))
    : resolve(nameOrPath);
  let raw: unknown;
  try {
    raw = JSON.parse(await Deno.readTextFile(file));
  } catch (error) {
    throw new TypeError(`Cannot load the target ${file}: ${(error as Error).message}`);
  }
  const parsed = targetFileSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new TypeError(
      `Cannot load the target ${file}: '${issue.path.join(".")}' ${issue.message}`,
    );
  }
  const spec = parsed.data;
  const unknown = spec.scenarios?.find((s) => !(SCENARIO_NAMES as readonly string[]).includes(s));
  if (unknown !== undefined) {
    throw new TypeError(
      `Cannot load the target ${file}: 'scenarios' names ${JSON.stringify(unknown)}, ` +
        `not one of ${SCENARIO_NAMES.join(", ")}`,
    );
  }
  if (spec.scenarios?.includes("failover") && !spec.leaderElection) {
    throw new TypeError(
      `Cannot load the target ${file}: 'scenarios' names "failover", which needs ` +
        "'leaderElection' to run two candidates",
    );
  }
  const serves = spec.command.some((arg) => arg.includes("{webhookPort}"));
  if (serves !== (spec.webhookConfigurations !== undefined)) {
    throw new TypeError(
      `Cannot load the target ${file}: a webhook needs both {webhookPort} in 'command' and ` +
        `'webhookConfigurations' that call it, but ${
          serves ? "the latter is" : "the former is"
        } missing`,
    );
  }
  if (spec.scenarios?.includes("admission") && !serves) {
    throw new TypeError(
      `Cannot load the target ${file}: 'scenarios' names "admission", which needs a webhook ` +
        "({webhookPort} in 'command' and 'webhookConfigurations')",
    );
  }
  checkPlaceholders(file, "command", spec.command, [...REQUIRED, ...OPTIONAL]);
  checkPlaceholders(file, "build", spec.build ?? [], ["deno"]);
  if (spec.leaderElection) {
    const { args, lease } = spec.leaderElection;
    checkPlaceholders(file, "leaderElection.args", args, CANDIDATE_PLACEHOLDERS);
    checkPlaceholders(file, "leaderElection.lease", [lease.namespace, lease.name], ["namespace"]);
  }
  checkPlaceholders(file, "object", [JSON.stringify(spec.object)], OBJECT_PLACEHOLDERS);
  const apiVersion = String(spec.object.apiVersion ?? "");
  const kind = String(spec.object.kind ?? "");
  if (!apiVersion || !kind) {
    throw new TypeError(`Cannot load the target ${file}: 'object' needs apiVersion and kind`);
  }
  const [group, version] = apiVersion.includes("/") ? apiVersion.split("/") : ["", apiVersion];
  const cwd = resolve(dirname(file), spec.cwd ?? ".");
  const crds = spec.crds.map((crd) => (isAbsolute(crd) ? crd : join(cwd, crd)));
  const target: Target = {
    name: spec.name,
    ...(spec.description !== undefined && { description: spec.description }),
    file,
    scenarios: (spec.scenarios as ScenarioName[] | undefined) ??
      SCENARIO_NAMES.filter((s) =>
        (s !== "failover" || spec.leaderElection) && (s !== "admission" || serves)
      ),
    cwd,
    command: spec.command,
    ...(spec.build && {
      build: spec.build.map((arg) => arg.replace(PLACEHOLDER, () => Deno.execPath())),
    }),
    env: spec.env ?? {},
    defaultV8Flags: spec.defaultV8Flags ?? [],
    crds,
    resource: {
      group: group!,
      version: version!,
      plural: spec.plural,
      kind,
      namespaced: true,
    },
    object: spec.object,
    update: spec.update,
    ready: spec.ready,
    readyzPath: spec.readyzPath,
    metricsPath: spec.metricsPath,
    ...(spec.leaderElection && { leaderElection: spec.leaderElection }),
    ...(spec.webhookConfigurations && {
      webhookConfigurations: spec.webhookConfigurations.map((f) =>
        isAbsolute(f) ? f : join(cwd, f)
      ),
    }),
  };
  if (target.build === undefined || await allExist(crds)) await settleScope(target);
  return target;
}

/**
 * Sets the scope of the target's kind from its CRD.
 *
 * @throws {TypeError} when a CRD file is missing or none defines the kind.
 */
async function settleScope(target: Target): Promise<void> {
  const { group, plural } = target.resource;
  const scope = await crdScope(target.crds, group, plural);
  if (scope === undefined) {
    throw new TypeError(
      `Cannot load the target ${target.file}: none of its 'crds' defines ${plural}.${group}, ` +
        "the kind of 'object' and 'plural', so its scope is unknown",
    );
  }
  target.resource = { ...target.resource, namespaced: scope === "Namespaced" };
}

async function allExist(files: readonly string[]): Promise<boolean> {
  for (const file of files) {
    if (!(await Deno.stat(file).then(() => true, () => false))) return false;
  }
  return true;
}

/** The `spec.scope` of the CRD of `plural`.`group` among the YAML `files`, if one defines it. */
async function crdScope(
  files: readonly string[],
  group: string,
  plural: string,
): Promise<string | undefined> {
  for (const path of files) {
    let text: string;
    try {
      text = await Deno.readTextFile(path);
    } catch (error) {
      throw new TypeError(
        `Cannot read the CRD file ${path}: ${(error as Error).message}`,
      );
    }
    for (const document of parseAllDocuments(text)) {
      const crd = document.toJS() as
        | { spec?: { group?: string; scope?: string; names?: { plural?: string } } }
        | null;
      if (crd?.spec?.group === group && crd.spec.names?.plural === plural) return crd.spec.scope;
    }
  }
  return undefined;
}

/**
 * Where the target's objects of a run in `namespace` are: that namespace,
 * or none for a cluster-scoped kind. Spread it into a request's options.
 *
 * @example
 * ```ts ignore
 * await client.delete(target.resource, name, { ...objectScope(target, "bench") });
 * ```
 */
export function objectScope(target: Target, namespace: string): { namespace?: string } {
  return target.resource.namespaced ? { namespace } : {};
}

/** Whether the target's command has a place for `knob`. */
export function supports(target: Target, knob: TargetKnob): boolean {
  return target.command.some((arg) => arg.includes(`{${knob}}`));
}

/**
 * The operator's argv with placeholders filled, and a candidate's
 * `leaderElection.args` appended; see the module documentation.
 *
 * @throws {RangeError} for a candidate of a target without `leaderElection`.
 */
export function expandCommand(target: Target, values: LaunchValues): string[] {
  const text: Record<string, string | undefined> = {
    deno: Deno.execPath(),
    kubeconfig: values.kubeconfig,
    metricsPort: String(values.metricsPort),
    probePort: String(values.probePort),
    namespace: values.namespace,
    v8Flags: values.v8Flags?.length ? values.v8Flags.join(",") : undefined,
    concurrency: values.concurrency?.toString(),
    cacheMaxObjects: values.cacheMaxObjects?.toString(),
    webhookPort: values.webhookPort?.toString(),
  };
  const argv: string[] = [];
  for (const arg of target.command) {
    const names = [...arg.matchAll(PLACEHOLDER)].map((m) => m[1]!);
    if (names.some((name) => text[name] === undefined)) continue;
    argv.push(arg.replace(PLACEHOLDER, (_, name: string) => text[name]!));
  }
  if (values.candidate === undefined) return argv;
  if (!target.leaderElection) {
    throw new RangeError(
      `Cannot run ${target.name} as the candidate ${values.candidate}: its target file has no ` +
        "'leaderElection'",
    );
  }
  const candidate = { id: values.candidate, namespace: values.namespace };
  return [...argv, ...target.leaderElection.args.map((arg) => fillText(arg, candidate))];
}

/** The Lease the target's candidates contend for in the run's `namespace`. */
export function leaseOf(
  target: Target,
  namespace: string,
): { namespace: string; name: string } | undefined {
  const lease = target.leaderElection?.lease;
  if (!lease) return undefined;
  return { namespace: fillText(lease.namespace, { namespace }), name: lease.name };
}

function fillText(text: string, values: Record<string, string>): string {
  return text.replace(PLACEHOLDER, (all, name: string) => values[name] ?? all);
}

/** The `index`-th object to create, from the target's template. */
export function renderObject(
  target: Target,
  values: { name: string; namespace: string; index: number; replicas: number },
): KubeObject {
  const object = fill(target.object, values) as KubeObject;
  if (!target.resource.namespaced) delete object.metadata?.namespace;
  return object;
}

function fill(value: unknown, values: Record<string, string | number>): unknown {
  if (typeof value === "string") {
    const whole = /^\{([a-zA-Z0-9]+)\}$/.exec(value);
    if (whole && whole[1]! in values) return values[whole[1]!];
    return value.replace(PLACEHOLDER, (all, name: string) => String(values[name] ?? all));
  }
  if (Array.isArray(value)) return value.map((item) => fill(item, values));
  if (typeof value === "object" && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, fill(v, values)]));
  }
  return value;
}

function checkPlaceholders(
  file: string,
  field: string,
  texts: readonly string[],
  allowed: readonly string[],
): void {
  for (const text of texts) {
    for (const match of text.matchAll(PLACEHOLDER)) {
      if (!allowed.includes(match[1]!)) {
        throw new TypeError(
          `Cannot load the target ${file}: '${field}' uses the unknown placeholder {${
            match[1]
          }}; known: ${allowed.map((a) => `{${a}}`).join(", ")}`,
        );
      }
    }
  }
}

/**
 * Runs the target's build command, if it has one, in its folder, then reads
 * its kind's scope from the CRDs the build may have written.
 *
 * @throws {Error} when the build fails, with the command and its output.
 * @throws {TypeError} when a CRD file is still missing or none defines the kind.
 */
export async function buildTarget(target: Target): Promise<void> {
  if (!target.build) return;
  const [program, ...args] = target.build as [string, ...string[]];
  const failed = await runQuiet(program, args, { cwd: target.cwd, env: target.env });
  if (!failed) return await settleScope(target);
  throw new Error(
    `Cannot build the target ${target.name}: ${
      target.build.join(" ")
    } exited with ${failed.code}\n` +
      failed.output,
  );
}
