/** `kinglet init`: what it refuses, what it writes, and that it writes all or nothing. */
import assert from "node:assert/strict";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { UsageError } from "../../lib/cli/flags.ts";
import { initCommand } from "../../lib/cli/init/command.ts";
import { kingletDigest } from "../../lib/build/vendor.ts";
import { importMap, locateKinglet, VENDORED } from "../../lib/cli/init/dependency.ts";
import { projectNames } from "../../lib/cli/init/names.ts";
import { projectFiles } from "../../lib/cli/init/project.ts";
import { defineKind } from "../../lib/crd/mod.ts";
import { z } from "zod";
import { usageError } from "../_support/usage_error.ts";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const MIRROR = { group: "example.dev", kind: "Mirror" };
/** A kinglet vendored into the project, as init records it. */
const VENDORED_KINGLET = {
  version: "0.1.0",
  commit: "0123456789abcdef0123456789abcdef01234567",
  source: VENDORED,
  sha256: "sha256-00",
};

/** Runs `initCommand` with its output silenced. */
async function init(args: string[]): Promise<number> {
  // deno-lint-ignore no-console -- silenced, not used
  const log = console.log;
  // deno-lint-ignore no-console -- silenced, not used
  console.log = () => {};
  try {
    return await initCommand(args);
  } finally {
    // deno-lint-ignore no-console -- restored
    console.log = log;
  }
}

Deno.test("init names default the plural as kubectl does and the version to v1alpha1", () => {
  const names = projectNames({ group: "example.dev", kind: "Proxy" });
  assert.equal(names.plural, "proxies");
  assert.equal(names.version, "v1alpha1");
  assert.equal(names.apiVersion, "example.dev/v1alpha1");
  assert.equal(names.crdName, "proxies.example.dev");
  assert.equal(names.kindConst, "proxies");
  assert.equal(names.resourceConst, "PROXIES");
  assert.equal(names.objectVar, "proxy");
  assert.equal(names.operator, "proxy-operator");
});

Deno.test("init accepts the versions Kubernetes orders: v1, v1alpha1, v2beta3", () => {
  for (const version of ["v1", "v2", "v1alpha1", "v2beta3", "v10beta12"]) {
    assert.equal(projectNames({ ...MIRROR, version }).version, version);
  }
});

Deno.test("init refuses a group without a dot and says what to write", () => {
  for (const group of ["example", "Example.dev", "-a.dev", "a..dev", ""]) {
    const error = usageError(() => projectNames({ ...MIRROR, group }));
    assert.match(error.message, /^--group ".*" is not an API group: write a lower-case DNS/);
    assert.match(error.message, /such as example\.dev/);
  }
});

Deno.test("init refuses a kind not in UpperCamelCase and suggests one", () => {
  assert.match(
    usageError(() => projectNames({ ...MIRROR, kind: "mirror" })).message,
    /^--kind "mirror" is not a kind: write it in UpperCamelCase.*such as Mirror$/,
  );
  assert.match(
    usageError(() => projectNames({ ...MIRROR, kind: "my-mirror" })).message,
    /such as MyMirror$/,
  );
  assert.match(usageError(() => projectNames({ ...MIRROR, kind: "9Lives" })).message, /--kind/);
});

Deno.test("init refuses a kind that the generated code imports from kinglet", () => {
  assert.match(
    usageError(() => projectNames({ ...MIRROR, kind: "Manager" })).message,
    /--kind Manager is a name the generated code imports from kinglet: choose another/,
  );
});

Deno.test("init refuses a plural that is not a lower-case DNS label", () => {
  for (const plural of ["Mirrors", "mirrors.v1", "-mirrors", "m".repeat(64)]) {
    const error = usageError(() => projectNames({ ...MIRROR, plural }));
    assert.match(error.message, /^--plural ".*" is not a resource name: .* such as mirrors$/);
  }
});

Deno.test("init refuses a version Kubernetes would not order", () => {
  for (const version of ["1", "v0", "V1", "v1alpha", "v1gamma1", "v1beta0", "latest"]) {
    const error = usageError(() => projectNames({ ...MIRROR, version }));
    assert.match(error.message, /^--version ".*" is not a Kubernetes API version: write v1, /);
  }
});

Deno.test("init's rules agree with defineKind on the names both accept", () => {
  for (const input of [MIRROR, { group: "a.b.c", kind: "X9", plural: "x-nines", version: "v3" }]) {
    const names = projectNames(input);
    const kind = defineKind({ ...names, spec: z.object({}) });
    assert.equal(kind.crd().metadata.name, names.crdName);
  }
});

Deno.test("a reserved word or a template's own name never becomes an identifier", () => {
  const classes = projectNames({ group: "a.io", kind: "Class", plural: "class" });
  assert.equal(classes.objectVar, "classObject");
  assert.equal(classes.kindConst, "classKind");
  assert.equal(projectNames({ group: "a.io", kind: "Status" }).objectVar, "statusObject");
  const things = projectNames({ group: "a.io", kind: "Thing", plural: "my-things" });
  assert.equal(things.kindConst, "myThings");
  assert.equal(things.resourceConst, "MY_THINGS");
  const maps = projectNames({ group: "a.io", kind: "Map", plural: "config-maps" });
  assert.equal(maps.resourceConst, "CONFIG_MAPS_RESOURCE", "CONFIG_MAPS is imported beside it");
  const mirror = projectNames({ group: "a.io", kind: "Mirror", plural: "mirror" });
  assert.equal(mirror.resourceConst, "MIRROR_RESOURCE", "the type Mirror is imported beside it");
});

Deno.test("init writes the project's files, and nothing else", () => {
  const files = projectFiles(projectNames(MIRROR), VENDORED_KINGLET);
  assert.deepEqual([...files.keys()].sort(), [
    ".gitignore",
    "README.md",
    "bench/target.json",
    "crds/kustomization.yaml",
    "deno.json",
    "deploy/Dockerfile.scratch",
    "deploy/Dockerfile.scratch.dockerignore",
    "deploy/clusterrole.yaml",
    "deploy/clusterrolebinding.yaml",
    "deploy/deployment.yaml",
    "deploy/kustomization.yaml",
    "deploy/namespace.yaml",
    "deploy/role.yaml",
    "deploy/rolebinding.yaml",
    "deploy/scratch_files.txt",
    "deploy/serviceaccount.yaml",
    "deploy/systemd/mirror-operator-credentials.service",
    "deploy/systemd/mirror-operator-credentials.timer",
    "deploy/systemd/mirror-operator.env",
    "deploy/systemd/mirror-operator.service",
    "deploy/validatingadmissionpolicy.yaml",
    "deploy/validatingadmissionpolicybinding.yaml",
    "kinglet.json",
    "main.ts",
    "scripts/bench.ts",
    "scripts/crds.ts",
    "scripts/deploy.ts",
    "src/controller.ts",
    "src/kind.ts",
    "src/operator.ts",
    "src/schema.ts",
    "tests/e2e/operator_test.ts",
    "tests/unit/controller_test.ts",
    "tests/unit/deploy_test.ts",
    "tests/unit/kinglet_test.ts",
  ]);
  const schema = files.get("src/schema.ts")!;
  assert.match(
    schema,
    /defineKind\(\{\n {2}group: MIRRORS\.group,\n {2}version: MIRRORS\.version,/,
  );
  assert.match(files.get("src/kind.ts")!, /\n {2}group: "example\.dev",\n {2}version: "v1alpha1",/);
  assert.match(schema, /conditions: conditionsSchema\(/);
  assert.match(files.get("src/controller.ts")!, /setCondition\(observed\?\.conditions, .*clock\)/);
  // The run path holds the kind's Resource, never its zod schema, and main.ts installs no CRD.
  assert.match(files.get("src/kind.ts")!, /^export const MIRRORS: Resource = \{$/m);
  assert.match(files.get("src/kind.ts")!, /^export type \{ Mirror \} from "\.\/schema\.ts";$/m);
  assert.match(schema, /^import \{ MIRRORS \} from "\.\/kind\.ts";$/m);
  assert.match(
    files.get("src/controller.ts")!,
    /^import \{ type Mirror, MIRRORS \} from "\.\/kind\.ts";$/m,
  );
  for (const path of ["main.ts", "src/controller.ts", "src/operator.ts"]) {
    assert.doesNotMatch(files.get(path)!, /schema\.ts"|\.crd\(\)/, path);
  }
  assert.doesNotMatch(files.get("main.ts")!, /crds:/);
  assert.match(
    files.get("tests/e2e/operator_test.ts")!,
    /await installCrds\(cluster\.client, \[crd\]/,
  );
  assert.doesNotMatch(files.get("tests/e2e/operator_test.ts")!, /crdInstallRule/);
  assert.match(files.get("tests/unit/controller_test.ts")!, /new MemoryCluster\(/);
  assert.match(files.get("tests/e2e/operator_test.ts")!, /await testCluster\(/);
  assert.match(files.get("tests/e2e/operator_test.ts")!, /await cluster\.serviceAccount\(/);
});

Deno.test("the project's deno.json maps kinglet's package names and has the front-door tasks", () => {
  const files = projectFiles(projectNames(MIRROR), VENDORED_KINGLET);
  const config = JSON.parse(files.get("deno.json")!);
  assert.equal(config.imports["@kinglet/kinglet/runtime"], "./vendor/kinglet/lib/runtime/mod.ts");
  assert.deepEqual(Object.keys(config.tasks).sort(), [
    "bench",
    "build",
    "check",
    "crds",
    "deploy",
    "e2e",
    "start",
    "test",
  ]);
  assert.equal(
    config.tasks.build,
    "deno run --allow-all ./vendor/kinglet/lib/build/cli.ts --name mirror-operator --entry main.ts " +
      "--allow-env=METRICS_ADDRESS,HEALTH_ADDRESS",
  );
  assert.equal(config.tasks.bench, "deno task crds && deno run --allow-all scripts/bench.ts");
  assert.equal(config.compilerOptions.noUncheckedIndexedAccess, true);
});

Deno.test("kinglet.json records the vendored kinglet, and the README says how to reproduce it", () => {
  const files = projectFiles(projectNames(MIRROR), VENDORED_KINGLET);
  assert.deepEqual(JSON.parse(files.get("kinglet.json")!), VENDORED_KINGLET);
  const readme = files.get("README.md")!;
  assert.match(readme, /vendored by `kinglet init` from kinglet 0\.1\.0 at commit `0123456789ab/);
  assert.match(
    readme,
    /`git -C <kinglet checkout> archive 0123456789abcdef0123456789abcdef01234567 LICENSE README\.md deno\.json main\.ts lib crds\/schema_hashes\.ts \| tar -x -C vendor\/kinglet`/,
  );
  assert.match(readme, /<kinglet checkout>\/lib\/build\/vendor\.ts \.`/);
  assert.doesNotMatch(readme, /--branch <tag>/);
  assert.match(
    files.get("tests/unit/kinglet_test.ts")!,
    /kingletDigest\(vendored\), record\.sha256/,
  );
  const checkout = projectFiles(projectNames(MIRROR), { version: "0.1.0", source: "../kinglet" });
  assert.ok(!checkout.has("tests/unit/kinglet_test.ts"), "nothing vendored, nothing to check");
});

Deno.test("--scope Cluster makes the kind cluster-scoped in its Resource, CRD, RBAC, tests and bench target", () => {
  const names = projectNames({ ...MIRROR, scope: "Cluster" });
  assert.equal(names.namespaced, false);
  assert.equal(projectNames(MIRROR).namespaced, true);
  const files = projectFiles(names, VENDORED_KINGLET);
  assert.match(files.get("src/kind.ts")!, /^ {2}namespaced: false,$/m);
  assert.match(files.get("src/schema.ts")!, /^ {2}scope: "Cluster",/m);
  // Its spec names where the ConfigMap goes; a namespaced kind's is its own namespace.
  assert.match(files.get("src/schema.ts")!, /^ {4}namespace: z\.string\(\)/m);
  assert.match(files.get("src/controller.ts")!, /spec: \{ namespace \} \} = mirror;/);
  assert.match(
    files.get("tests/unit/controller_test.ts")!,
    /cluster\.object<Mirror>\(MIRRORS, "sample"\)/,
  );
  assert.match(files.get("tests/e2e/operator_test.ts")!, /await client\.delete\(MIRRORS, "sample"/);
  const target = JSON.parse(files.get("bench/target.json")!);
  assert.deepEqual(target.object.metadata, { name: "{name}" });
  assert.equal(target.object.spec.namespace, "{namespace}");
  assert.match(files.get("deploy/clusterrole.yaml")!, /resources: \["mirrors"\]/);
  assert.match(
    usageError(() => projectNames({ ...MIRROR, scope: "cluster" })).message,
    /--scope "cluster" is not a scope: write Namespaced \(the default/,
  );
});

Deno.test("init refuses a kind too long to name its operator and namespace", () => {
  const kind = `M${"x".repeat(47)}`;
  assert.match(
    usageError(() => projectNames({ ...MIRROR, kind })).message,
    /is too long: it names the operator mx+-operator and its namespace mx+-operator-system/,
  );
  assert.equal(
    projectNames({ ...MIRROR, kind: kind.slice(1).replace("x", "M") }).operator.length,
    56,
  );
});

Deno.test("the project's npm packages are the versions kinglet pins", async () => {
  const kinglet = JSON.parse(await Deno.readTextFile(join(ROOT, "deno.json")));
  const map = importMap("https://example.com/kinglet/v0.1.0/");
  for (const name of ["zod", "yaml", "@kubernetes/client-node"]) {
    assert.equal(map[name], kinglet.imports[name], name);
  }
  assert.equal(map["@kinglet/kinglet/crd"], "https://example.com/kinglet/v0.1.0/lib/crd/mod.ts");
});

Deno.test("a project that imports kinglet by URL says its bench needs a checkout", () => {
  const url = "https://example.com/kinglet/v0.1.0";
  const files = projectFiles(projectNames(MIRROR), { source: url });
  assert.match(
    files.get("scripts/bench.ts")!,
    /console\.error\(\s*"deno task bench runs the benchmark harness of a kinglet checkout/,
  );
  assert.match(files.get("README.md")!, /kinglet's sources at `https:\/\/example\.com\/kinglet/);
});

Deno.test("the bench runs the operator as the build ships it, from the build, with no copy of its flags", () => {
  const files = projectFiles(projectNames(MIRROR), VENDORED_KINGLET);
  const target = JSON.parse(files.get("bench/target.json")!);
  for (const field of ["command", "build", "env", "defaultV8Flags"]) {
    assert.equal(target[field], undefined, field);
  }
  const script = files.get("scripts/bench.ts")!;
  assert.match(script, /import \{ shippedCommand \} from "@kinglet\/kinglet\/build";/);
  assert.match(script, /build: \["\{deno\}", "task", "build", "--bundle-only"\]/);
  assert.doesNotMatch(script, /"--no-code-cache"|max-semi-space|MALLOC_/);
});

Deno.test("the bench target names the kind, its CRD file and its Ready condition", () => {
  const files = projectFiles(projectNames({ ...MIRROR, version: "v1" }), VENDORED_KINGLET);
  const target = JSON.parse(files.get("bench/target.json")!);
  assert.equal(target.object.apiVersion, "example.dev/v1");
  assert.deepEqual(target.crds, ["crds/mirrors.example.dev.yaml"]);
  assert.equal(target.plural, "mirrors");
  assert.equal(target.ready.path, "status.conditions[type=Ready].status");
});

Deno.test("--kinglet takes a checkout (written relative to the project) or a URL", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const local = await locateKinglet(ROOT, join(dir, "project"));
    assert.equal(local.path, ROOT.replace(/\/$/, ""));
    assert.match(local.spec, /^\.\.\//);
    assert.equal(local.record.source, local.spec);
    const url = await locateKinglet("https://example.com/kinglet/v1/", dir);
    const spec = "https://example.com/kinglet/v1";
    assert.deepEqual(url, { spec, record: { source: spec } });
    // Unset: the kinglet init runs from, to be vendored, pinned by the digest of its files.
    const vendored = await locateKinglet(undefined, dir);
    assert.equal(vendored.spec, VENDORED);
    assert.equal(vendored.record.sha256, await kingletDigest(ROOT));
    assert.equal(vendored.record.version, "0.1.0");
    await assert.rejects(locateKinglet(dir, dir), /--kinglet .* holds no kinglet sources/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("init writes into a new or an empty folder", async () => {
  const dir = await Deno.makeTempDir();
  try {
    assert.equal(await init([join(dir, "a", "new"), "--group=example.dev", "--kind=Mirror"]), 0);
    assert.ok((await Deno.stat(join(dir, "a", "new", "src", "schema.ts"))).isFile);
    // kinglet is vendored, and kinglet.json pins the copy.
    const record = JSON.parse(await Deno.readTextFile(join(dir, "a", "new", "kinglet.json")));
    assert.equal(record.sha256, await kingletDigest(join(dir, "a", "new", "vendor", "kinglet")));
    assert.equal(record.sha256, await kingletDigest(ROOT));
    await Deno.mkdir(join(dir, "empty"));
    assert.equal(await init([join(dir, "empty"), "--group=example.dev", "--kind=Mirror"]), 0);
    assert.ok((await Deno.stat(join(dir, "empty", "deno.json"))).isFile);
    const left = [];
    for await (const entry of Deno.readDir(dir)) left.push(entry.name);
    assert.deepEqual(left.sort(), ["a", "empty"]); // no staging folder left behind
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a project formats clean as generated, whatever the length of its names", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const long = `a${"b".repeat(45)}`;
    const cases = [
      ["--group=example.dev", "--kind=EdgeSite"],
      ["--group=init.e2e.kinglet.dev", "--kind=EdgeSite", "--scope=Cluster"],
      [`--group=${long}.${long}.example.com`, `--kind=Q${long}`, "--version=v1beta22"],
    ];
    for (const [i, args] of cases.entries()) {
      assert.equal(await init([join(dir, String(i)), ...args, `--kinglet=${ROOT}`]), 0);
      const out = await new Deno.Command(Deno.execPath(), {
        args: ["fmt", "--check"],
        cwd: join(dir, String(i)),
        env: { NO_COLOR: "1" },
      }).output();
      const text = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
      assert.equal(out.code, 0, `${args.join(" ")}:\n${text}`);
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("init refuses a folder that is not empty, and bad input, writing nothing", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(join(dir, "notes.txt"), "mine");
    await assert.rejects(
      init([dir, "--group", "example.dev", "--kind", "Mirror"]),
      UsageError,
      "is not empty (it holds notes.txt): name a new or empty folder",
    );
    const fresh = join(dir, "fresh");
    for (
      const args of [
        [fresh, "--group", "example", "--kind", "Mirror"],
        [fresh, "--group", "example.dev", "--kind", "mirror"],
        [fresh, "--group", "example.dev", "--kind", "Mirror", "--plural", "Mirrors"],
        [fresh, "--group", "example.dev", "--kind", "Mirror", "--version", "1.0"],
        [fresh, "--group", "example.dev", "--kind", "Mirror", "--kinglet", dir],
        [fresh, "--group", "example.dev"],
        ["--group", "example.dev", "--kind", "Mirror"],
      ]
    ) {
      await assert.rejects(init(args), UsageError, args.join(" "));
    }
    const left = [];
    for await (const entry of Deno.readDir(dir)) left.push(entry.name);
    assert.deepEqual(left, ["notes.txt"]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("kinglet init reports bad input on stderr with exit code 2", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", join(ROOT, "main.ts"), "init", join(dir, "p"), "--group=ex", "--kind=M"],
      stdout: "piped",
      stderr: "piped",
    }).output();
    assert.equal(out.code, 2);
    assert.match(
      new TextDecoder().decode(out.stderr),
      /^kinglet: --group "ex" is not an API group/,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
