import assert from "node:assert/strict";
import { join } from "node:path";
import { parse } from "yaml";
import { compareCrds, crdFiles, CRDS_DIR, HASHES_FILE, hashesSource } from "../../hack/gen_crds.ts";
import { compareExampleCrds, exampleCrdFiles } from "../../hack/_example_crds.ts";
import { CRD_SCHEMA_HASHES } from "../../crds/schema_hashes.ts";
import { SCHEMA_HASH_ANNOTATION, schemaHash, withSchemaHash } from "../../lib/crd/mod.ts";
import { KIND_DEFINITIONS } from "../../lib/operators/mod.ts";
import { BACKUPS } from "../../examples/backup/kind.ts";
import { backups } from "../../examples/backup/schema.ts";
import { GREETINGS } from "../../examples/greeting/kind.ts";
import { greetings } from "../../examples/greeting/schema.ts";

Deno.test("the committed CRDs match the zod schemas (run `deno task crds` if this fails)", async () => {
  assert.deepEqual(await compareCrds(CRDS_DIR), []);
});

Deno.test("each generated CRD file parses back to the CRD built from its schema", () => {
  const files = crdFiles();
  assert.equal(files.size, KIND_DEFINITIONS.length);
  for (const definition of KIND_DEFINITIONS) {
    const crd = withSchemaHash(definition.crd());
    const content = files.get(`${crd.metadata.name}.yaml`);
    assert.ok(content, `no file for ${crd.metadata.name}`);
    assert.deepEqual(parse(content), crd);
  }
});

Deno.test("the schema hashes kinglet run compares with are those of the CRDs install applies", () => {
  const expected = Object.fromEntries(KIND_DEFINITIONS.map((definition) => {
    const crd = definition.crd();
    return [crd.metadata.name, schemaHash(crd)];
  }));
  assert.deepEqual(CRD_SCHEMA_HASHES, expected);
  for (const definition of KIND_DEFINITIONS) {
    const crd = withSchemaHash(definition.crd());
    assert.equal(crd.metadata.annotations?.[SCHEMA_HASH_ANNOTATION], expected[crd.metadata.name]);
  }
});

Deno.test("drift detection reports schema hashes that no longer match the CRDs", async () => {
  const dir = await Deno.makeTempDir({ prefix: "kinglet-crds-" });
  try {
    for (const [name, content] of crdFiles()) await Deno.writeTextFile(join(dir, name), content);
    await Deno.writeTextFile(
      join(dir, HASHES_FILE),
      hashesSource().replace(/"[0-9a-f]{16}"/, '"0"'),
    );
    const problems = await compareCrds(dir);
    assert.equal(problems.length, 1);
    assert.match(problems[0]!, /schema_hashes\.ts: differs from line 4/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a schema hash changes with the schema and ignores its own annotation", () => {
  const crd = KIND_DEFINITIONS[0]!.crd();
  const hash = schemaHash(crd);
  assert.match(hash, /^[0-9a-f]{16}$/);
  assert.equal(schemaHash(withSchemaHash(crd)), hash);
  const renamed = structuredClone(crd);
  renamed.spec.names.shortNames = ["web"];
  assert.notEqual(schemaHash(renamed), hash);
});

Deno.test("drift detection reports an edited, a missing and a stale CRD file", async () => {
  const dir = await Deno.makeTempDir({ prefix: "kinglet-crds-" });
  try {
    const files = [...crdFiles()];
    const [edited, missing, kept] = files;
    await Deno.writeTextFile(join(dir, edited![0]), edited![1].replace("shortNames", "shortnames"));
    await Deno.writeTextFile(join(dir, kept![0]), kept![1]);
    await Deno.writeTextFile(join(dir, HASHES_FILE), hashesSource());
    await Deno.writeTextFile(
      join(dir, "gadgets.kinglet.dev.yaml"),
      "kind: CustomResourceDefinition\n",
    );
    const problems = await compareCrds(dir);
    assert.equal(problems.length, 3);
    assert.match(
      problems[0]!,
      new RegExp(
        `${
          edited![0]
        }: differs from line \\d+: expected "    shortNames:", found "    shortnames:"`,
      ),
    );
    assert.equal(problems[1], `${join(dir, missing![0])}: missing`);
    assert.equal(
      problems[2],
      `${join(dir, "gadgets.kinglet.dev.yaml")}: no kind generates it any more`,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("the examples' committed CRDs match their schemas (run `deno task crds` if this fails)", async () => {
  assert.deepEqual(await compareExampleCrds(), []);
});

Deno.test("each example's CRD file is the CRD of its schema, named by the resource of its kind.ts", () => {
  const files = exampleCrdFiles();
  for (
    const [example, kind, resource] of [
      ["backup", backups, BACKUPS],
      ["greeting", greetings, GREETINGS],
    ] as const
  ) {
    // kind.ts is what the operator runs with: the CRD must serve exactly that resource.
    assert.deepEqual(kind.resource, resource);
    const crd = withSchemaHash(kind.crd());
    const content = files.get(`examples/${example}/crds/${resource.plural}.${resource.group}.yaml`);
    assert.ok(content, `no file for ${crd.metadata.name}`);
    assert.deepEqual(parse(content), crd);
  }
  assert.equal(files.size, 3, "the two CRDs and the Backup example's webhook configuration");
});

Deno.test("drift detection reports an edited, a missing and a stale example CRD file", async () => {
  const root = await Deno.makeTempDir({ prefix: "kinglet-example-crds-" });
  try {
    const files = [...exampleCrdFiles()];
    const [edited, content] = files[0]!;
    const [missing] = files[1]!;
    const [webhooks] = files[2]!;
    await Deno.mkdir(join(root, edited, ".."), { recursive: true });
    await Deno.writeTextFile(join(root, edited), content.replace("listKind", "listkind"));
    const stale = join(root, edited, "..", "gadgets.example.kinglet.dev.yaml");
    await Deno.writeTextFile(stale, "kind: CustomResourceDefinition\n");
    const problems = await compareExampleCrds(root);
    assert.equal(problems.length, 4);
    assert.match(problems[0]!, /differs from line \d+: expected " {4}listKind: /);
    assert.equal(problems[1], `${join(root, missing)}: missing`);
    assert.equal(problems[2], `${join(root, webhooks)}: missing`);
    assert.equal(problems[3], `${stale}: no kind generates it any more`);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

const GEN_CRDS = new URL("../../hack/gen_crds.ts", import.meta.url).pathname;

async function runCheck(dir: string) {
  const { code, stdout, stderr } = await new Deno.Command(Deno.execPath(), {
    args: ["run", "--allow-read", GEN_CRDS, "--check", `--dir=${dir}`],
  }).output();
  const decoder = new TextDecoder();
  return { code, stdout: decoder.decode(stdout), stderr: decoder.decode(stderr) };
}

Deno.test("gen_crds --check exits 0 on the committed CRDs and 1 with a hint on stale ones", async () => {
  const current = await runCheck(CRDS_DIR);
  assert.equal(current.code, 0, current.stderr);
  const dir = await Deno.makeTempDir({ prefix: "kinglet-crds-" });
  try {
    const stale = await runCheck(dir);
    assert.equal(stale.code, 1);
    assert.match(stale.stderr, /webapps\.kinglet\.dev\.yaml: missing/);
    assert.match(stale.stderr, /run `deno task crds` and commit crds\//);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
