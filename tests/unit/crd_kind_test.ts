import assert from "node:assert/strict";
import { z } from "zod";
import { type CustomObject, defineKind, type JsonSchema } from "../../lib/crd/mod.ts";
import {
  DATABASE_CLUSTERS,
  databaseClusterDefinition,
  INFERENCE_SERVICES,
  inferenceServiceDefinition,
  WEB_APPS,
  webAppDefinition,
} from "../../lib/operators/mod.ts";

const base = {
  group: "example.com",
  version: "v1",
  kind: "Backup",
  spec: z.object({ replicas: z.int32().min(0).default(1), volume: z.string() }),
};

const properties = (node: JsonSchema) => node.properties as Record<string, JsonSchema>;
const rootOf = (
  kind: { crd(): { spec: { versions: { schema: { openAPIV3Schema: JsonSchema } }[] } } },
) => kind.crd().spec.versions[0]!.schema.openAPIV3Schema;

Deno.test("a kind defined with only its names and spec gets the defaults kubectl users expect", () => {
  const backups = defineKind(base);
  assert.deepEqual(backups.resource, {
    group: "example.com",
    version: "v1",
    plural: "backups",
    kind: "Backup",
    namespaced: true,
  });
  assert.equal(backups.apiVersion, "example.com/v1");
  const crd = backups.crd();
  assert.equal(crd.metadata.name, "backups.example.com");
  assert.equal(crd.metadata.labels, undefined);
  assert.equal(crd.spec.scope, "Namespaced");
  assert.deepEqual(crd.spec.names, {
    kind: "Backup",
    listKind: "BackupList",
    plural: "backups",
    singular: "backup",
  });
  const version = crd.spec.versions[0]!;
  assert.deepEqual([version.name, version.served, version.storage], ["v1", true, true]);
  assert.equal(version.subresources, undefined, "no status schema, no status subresource");
  assert.equal(version.additionalPrinterColumns, undefined);
  const root = version.schema.openAPIV3Schema;
  assert.deepEqual(Object.keys(properties(root)), ["apiVersion", "kind", "spec"]);
  assert.deepEqual(root.required, ["spec"]);
  assert.equal(root["x-kubernetes-validations"], undefined);
});

Deno.test("the default plural follows English spelling as kubectl does", () => {
  const plural = (kind: string) => defineKind({ ...base, kind }).resource.plural;
  assert.equal(plural("Policy"), "policies");
  assert.equal(plural("Gateway"), "gateways");
  assert.equal(plural("Address"), "addresses");
  assert.equal(plural("Box"), "boxes");
  assert.equal(plural("Patch"), "patches");
  assert.equal(plural("DatabaseCluster"), "databaseclusters");
});

Deno.test("a cluster-scoped kind is addressed without a namespace", () => {
  const kind = defineKind({ ...base, kind: "Policy", scope: "Cluster" });
  assert.equal(kind.resource.namespaced, false);
  assert.equal(kind.crd().spec.scope, "Cluster");
});

Deno.test("a status schema adds the status subresource and the status property", () => {
  const kind = defineKind({ ...base, status: z.object({ phase: z.string().optional() }) });
  const version = kind.crd().spec.versions[0]!;
  assert.deepEqual(version.subresources, { status: {} });
  assert.deepEqual(properties(rootOf(kind)).status, {
    type: "object",
    properties: { phase: { type: "string" } },
  });
});

Deno.test("the scale subresource takes configurable paths and drops the duplicate replicas minimum", () => {
  const defaults = defineKind({ ...base, scale: {} });
  assert.deepEqual(defaults.crd().spec.versions[0]!.subresources?.scale, {
    specReplicasPath: ".spec.replicas",
    statusReplicasPath: ".status.replicas",
  });
  assert.equal(properties(properties(rootOf(defaults)).spec!).replicas!.minimum, undefined);

  const custom = defineKind({
    ...base,
    spec: z.object({ size: z.object({ pods: z.int32().min(0) }) }),
    scale: {
      specReplicasPath: ".spec.size.pods",
      statusReplicasPath: ".status.pods",
      labelSelectorPath: ".status.selector",
    },
  });
  assert.deepEqual(custom.crd().spec.versions[0]!.subresources?.scale, {
    specReplicasPath: ".spec.size.pods",
    statusReplicasPath: ".status.pods",
    labelSelectorPath: ".status.selector",
  });
  const size = properties(properties(rootOf(custom)).spec!).size!;
  assert.equal(properties(size).pods!.minimum, undefined);
  assert.equal(properties(properties(rootOf(defineKind(base))).spec!).replicas!.minimum, 0);
});

Deno.test("CEL rules go on the root and, through meta, on a field", () => {
  const kind = defineKind({
    ...base,
    spec: z.object({
      volume: z.string().meta({
        "x-kubernetes-validations": [{ rule: "self == oldSelf", message: "volume is immutable" }],
      }),
    }),
    validations: [{ rule: "self.metadata.name.size() <= 20", message: "too long" }],
  });
  const root = rootOf(kind);
  assert.deepEqual(root["x-kubernetes-validations"], [
    { rule: "self.metadata.name.size() <= 20", message: "too long" },
  ]);
  assert.equal(properties(root).metadata, undefined, "no rule names metadata.name");
  assert.deepEqual(properties(properties(root).spec!).volume!["x-kubernetes-validations"], [
    { rule: "self == oldSelf", message: "volume is immutable" },
  ]);
});

Deno.test("a root rule that names .metadata.name makes the schema declare it", () => {
  const kind = defineKind({
    ...base,
    validations: [{
      rule: "self.metadata.name.size() <= 20",
      message: "too long",
      fieldPath: ".metadata.name",
    }],
  });
  assert.deepEqual(properties(rootOf(kind)).metadata, {
    type: "object",
    properties: { name: { type: "string" } },
  });
});

Deno.test("names, categories, description, labels and printer columns reach the CRD", () => {
  const kind = defineKind({
    ...base,
    plural: "backupjobs",
    singular: "backupjob",
    shortNames: ["bk"],
    categories: ["all"],
    description: "Backup copies a volume.",
    labels: { "app.kubernetes.io/part-of": "backups" },
    printerColumns: [{ name: "Volume", type: "string", jsonPath: ".spec.volume", priority: 1 }],
  });
  const crd = kind.crd();
  assert.equal(crd.metadata.name, "backupjobs.example.com");
  assert.deepEqual(crd.metadata.labels, { "app.kubernetes.io/part-of": "backups" });
  assert.deepEqual(crd.spec.names.shortNames, ["bk"]);
  assert.deepEqual(crd.spec.names.categories, ["all"]);
  assert.equal(crd.spec.names.singular, "backupjob");
  assert.equal(rootOf(kind).description, "Backup copies a volume.");
  assert.deepEqual(crd.spec.versions[0]!.additionalPrinterColumns, [
    { name: "Volume", type: "string", jsonPath: ".spec.volume", priority: 1 },
  ]);
});

Deno.test("crd() hands out a fresh copy each time", () => {
  const kind = defineKind(base);
  const first = kind.crd();
  first.spec.names.plural = "changed";
  assert.equal(kind.crd().spec.names.plural, "backups");
});

Deno.test("defineKind refuses malformed options at once, naming the option and the value", () => {
  const cases: [Record<string, unknown>, RegExp][] = [
    [
      { group: "example" },
      /'group' must be a lower-case DNS subdomain with at least one dot, got "example"/,
    ],
    [{ version: "V1" }, /'version' must be a lower-case DNS label .*got "V1"/],
    [{ kind: "backup" }, /'kind' must be a name in UpperCamelCase, e\.g\. Backup, got "backup"/],
    [{ shortNames: ["b k"] }, /'shortNames\[0\]' must be a lower-case DNS label/],
    [{ scope: "Global" }, /'scope' must be Namespaced or Cluster, got "Global"/],
    [
      { printerColumns: [{ name: "X", type: "text", jsonPath: ".spec.x" }] },
      /'printerColumns\[0\]\.type' must be string, integer, number, boolean, date, got "text"/,
    ],
    [
      { printerColumns: [{ name: "X", type: "string", jsonPath: "spec.x" }] },
      /'printerColumns\[0\]\.jsonPath' must be a path starting with '\.'/,
    ],
    [
      { validations: [{ rule: "", message: "m" }] },
      /'validations\[0\]\.rule' must be a CEL expression/,
    ],
    [
      { scale: { specReplicasPath: ".status.replicas" } },
      /'scale\.specReplicasPath' must be a path under \.spec/,
    ],
  ];
  for (const [options, message] of cases) {
    assert.throws(
      () => defineKind({ ...base, ...options } as Parameters<typeof defineKind>[0]),
      (error: Error) => {
        assert.ok(error instanceof RangeError, `${JSON.stringify(options)}: ${error}`);
        assert.match(error.message, /^Cannot define the kind \w+/);
        assert.match(error.message, message);
        return true;
      },
    );
  }
});

Deno.test("the object type has the spec with defaults applied and the optional status", () => {
  const kind = defineKind({ ...base, status: z.object({ phase: z.enum(["Ready", "Failed"]) }) });
  type Backup = CustomObject<typeof kind>;
  const backup: Backup = {
    metadata: { name: "nightly" },
    spec: { replicas: 1, volume: "data" },
  };
  const replicas: number = backup.spec.replicas;
  // @ts-expect-error: a status phase outside the enum does not type-check
  const wrong: Backup["status"] = { phase: "Running" };
  assert.equal(replicas, 1);
  assert.equal(backup.status?.phase, undefined);
  assert.deepEqual(wrong, { phase: "Running" });
});

Deno.test("kinglet's three kinds are defined with the public API, on their run-time resources", () => {
  assert.deepEqual(webAppDefinition.resource, WEB_APPS);
  assert.deepEqual(databaseClusterDefinition.resource, DATABASE_CLUSTERS);
  assert.deepEqual(inferenceServiceDefinition.resource, INFERENCE_SERVICES);
  const rule = (rootOf(databaseClusterDefinition)["x-kubernetes-validations"] as {
    rule: string;
  }[])[0]!;
  assert.match(rule.rule, /^self\.metadata\.name\.size\(\) <= 52 && /);
});
