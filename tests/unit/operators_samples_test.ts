import assert from "node:assert/strict";
import { parse } from "yaml";
import {
  renderDatabaseCluster,
  renderInferenceService,
  renderWebApp,
  validateDatabaseCluster,
  validateInferenceService,
  validateWebApp,
} from "../../lib/operators/mod.ts";
import type { KubeObject } from "../../lib/kube/types.ts";

const SAMPLES = new URL("../../deploy/samples/", import.meta.url);

async function sample(file: string): Promise<KubeObject> {
  return parse(await Deno.readTextFile(new URL(file, SAMPLES)));
}

const stored = (object: KubeObject) => ({
  ...object,
  metadata: { ...object.metadata, uid: "uid-sample", generation: 1 },
});

Deno.test("the WebApp sample is valid and renders", async () => {
  const object = await sample("webapp.yaml");
  assert.equal(object.apiVersion, "kinglet.dev/v1alpha1");
  assert.equal(object.kind, "WebApp");
  const result = validateWebApp(object.spec);
  assert.ok(result.ok, result.ok ? "" : result.message);
  const { deployment } = renderWebApp({ ...stored(object), spec: result.spec });
  assert.equal(deployment.spec?.replicas, 2);
});

Deno.test("the DatabaseCluster sample is valid and renders", async () => {
  const object = await sample("databasecluster.yaml");
  assert.equal(object.kind, "DatabaseCluster");
  const result = validateDatabaseCluster(object.spec);
  assert.ok(result.ok, result.ok ? "" : result.message);
  const { statefulSet } = renderDatabaseCluster({ ...stored(object), spec: result.spec });
  assert.equal(
    statefulSet.spec?.template.spec?.containers[0]?.image,
    "docker.io/library/postgres:17",
  );
});

Deno.test("the InferenceService sample is valid and renders", async () => {
  const object = await sample("inferenceservice.yaml");
  assert.equal(object.kind, "InferenceService");
  const result = validateInferenceService(object.spec);
  assert.ok(result.ok, result.ok ? "" : result.message);
  const { deployment } = renderInferenceService({ ...stored(object), spec: result.spec });
  assert.equal(deployment.spec?.template.spec?.nodeSelector, undefined);
});
