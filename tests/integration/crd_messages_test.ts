/**
 * The API server's refusals of bad custom resources, as the CRDs shape them:
 * each names the offending field once, and no refusal reads `<nil>`.
 *
 *   deno run -A hack/with_cluster.ts -- deno test -A tests/integration/crd_messages_test.ts
 */
import assert from "node:assert/strict";
import type { KubeClient } from "../../lib/kube/client.ts";
import { ApiError } from "../../lib/kube/errors.ts";
import type { Resource } from "../../lib/kube/types.ts";
import { DATABASE_CLUSTERS } from "../../lib/operators/database/kind.ts";
import { INFERENCE_SERVICES } from "../../lib/operators/inference/kind.ts";
import { WEB_APPS } from "../../lib/operators/webapp/kind.ts";
import { installCrdsOnce } from "../_support/crds.ts";
import { adminClient, createNamespace, deleteNamespace } from "../_support/kube.ts";

const SPECS: Record<string, Record<string, unknown>> = {
  WebApp: { image: "nginx:1.27" },
  InferenceService: { model: "llama" },
  DatabaseCluster: { engine: "postgres", version: "17", storage: { size: "1Gi" } },
};

/** The API server's refusal to create `resource` named `name` with `spec` added to a valid one. */
async function refusal(
  client: KubeClient,
  resource: Resource,
  namespace: string,
  name: string,
  spec: Record<string, unknown> = {},
): Promise<ApiError> {
  const error = await client.create(resource, {
    apiVersion: `${resource.group}/${resource.version}`,
    kind: resource.kind,
    metadata: { name, namespace },
    spec: { ...SPECS[resource.kind], ...spec },
  }).then(() => undefined, (e) => e);
  assert.ok(error instanceof ApiError, `expected the API server to refuse, got ${error}`);
  assert.equal(error.status, 422);
  return error;
}

/** The refusal's one cause; fails when there are several or it names no field. */
function onlyCause(error: ApiError): { field: string; message: string } {
  assert.equal(error.causes.length, 1, `one cause expected: ${error.message}`);
  const [{ field, message }] = error.causes as [{ field?: string; message?: string }];
  assert.ok(field && message, `a cause without a field: ${error.message}`);
  assert.doesNotMatch(error.message, /<nil>/);
  return { field, message };
}

Deno.test("a name too long for the kind's Services is refused naming metadata.name once", async () => {
  const client = await adminClient();
  const ns = await createNamespace(client, "crd-msg-name");
  try {
    await installCrdsOnce(client);
    const webApp = await refusal(client, WEB_APPS, ns, `w${"a".repeat(63)}`);
    const cause = onlyCause(webApp);
    assert.equal(cause.field, "metadata.name");
    assert.match(
      cause.message,
      /must be a DNS label of at most 63 characters starting with a letter/,
    );
    assert.match(
      webApp.message,
      /is invalid: metadata\.name: Invalid value: .*must be a DNS label/,
    );
    assert.equal(webApp.message.split("metadata.name").length, 2, "named once");
    const db = onlyCause(await refusal(client, DATABASE_CLUSTERS, ns, `d${"b".repeat(52)}`));
    assert.equal(db.field, "metadata.name");
    assert.match(db.message, /must be a DNS label of at most 52 characters/);
  } finally {
    await deleteNamespace(client, ns).finally(() => client.close());
  }
});

Deno.test("a negative replicas is refused once, naming spec.replicas", async () => {
  const client = await adminClient();
  const ns = await createNamespace(client, "crd-msg-replicas");
  try {
    await installCrdsOnce(client);
    for (const resource of [WEB_APPS, INFERENCE_SERVICES, DATABASE_CLUSTERS]) {
      const error = await refusal(client, resource, ns, "negative", { replicas: -1 });
      const cause = onlyCause(error);
      assert.match(cause.field, /^\.?spec\.replicas$/, `${resource.kind}: ${error.message}`);
      assert.match(cause.message, /Invalid value: -1: .*(non-negative|greater than or equal to)/);
    }
  } finally {
    await deleteNamespace(client, ns).finally(() => client.close());
  }
});
