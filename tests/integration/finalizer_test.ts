/**
 * Finalizers against a real API server: JSON patches with `test` ops, a
 * failed precondition reported as a 409 Conflict, and the deletion protocol.
 *
 *   deno run -A hack/with_cluster.ts -- deno test -A tests/integration/finalizer_test.ts
 */
import assert from "node:assert/strict";
import { KubeClient } from "../../lib/kube/client.ts";
import { loadConfig } from "../../lib/kube/config.ts";
import { isConflict, isNotFound } from "../../lib/kube/errors.ts";
import { CONFIG_MAPS, NAMESPACES } from "../../lib/kube/resources.ts";
import type { KubeObject } from "../../lib/kube/types.ts";
import {
  addFinalizer,
  finalizer,
  removeFinalizer,
} from "../../lib/runtime/controller/finalizer.ts";
import { testKubeconfig } from "../_support/cluster.ts";

const OURS = "kinglet.dev/cleanup";

async function scope(prefix: string) {
  const client = new KubeClient(await loadConfig({ kubeconfig: testKubeconfig() }));
  const namespace = `${prefix}-${crypto.randomUUID().slice(0, 8)}`;
  await client.create(NAMESPACES, {
    apiVersion: "v1",
    kind: "Namespace",
    metadata: { name: namespace },
  });
  const create = (name: string, finalizers?: string[]) =>
    client.create<KubeObject>(CONFIG_MAPS, {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name, namespace, ...(finalizers ? { finalizers } : {}) },
    });
  return {
    client,
    namespace,
    create,
    async [Symbol.asyncDispose]() {
      try {
        await client.delete(NAMESPACES, namespace);
      } finally {
        client.close();
      }
    },
  };
}

Deno.test("a finalizer is added and removed with preconditions the API server enforces", async () => {
  await using s = await scope("fin-patch");
  const { client, namespace, create } = s;
  const read = await create("a");
  const added = await addFinalizer(client, CONFIG_MAPS, read, OURS);
  assert.deepEqual(added.metadata?.finalizers, [OURS]);

  const stale = await addFinalizer(client, CONFIG_MAPS, read, "other.io/x").catch((e) => e);
  assert.ok(isConflict(stale), `a stale add was not a Conflict: ${stale}`);

  const withOther = await addFinalizer(client, CONFIG_MAPS, added, "other.io/x");
  assert.deepEqual(withOther.metadata?.finalizers, [OURS, "other.io/x"]);
  // Someone removes the first entry: our index for "other.io/x" is now wrong.
  await client.patch(CONFIG_MAPS, "a", [{ op: "remove", path: "/metadata/finalizers/0" }], {
    type: "json",
    namespace,
  });
  const shifted = await removeFinalizer(client, CONFIG_MAPS, withOther, "other.io/x").catch((e) =>
    e
  );
  assert.ok(isConflict(shifted), `a shifted remove was not a Conflict: ${shifted}`);
  const current = await client.get(CONFIG_MAPS, "a", { namespace });
  assert.deepEqual(current.metadata?.finalizers, ["other.io/x"]);
  const removed = await removeFinalizer(client, CONFIG_MAPS, current, "other.io/x");
  assert.equal(removed.metadata?.finalizers, undefined);
});

Deno.test("finalizer holds a deleted object until cleanup succeeded, then lets it go", async () => {
  await using s = await scope("fin-flow");
  const { client, namespace, create } = s;
  const log: string[] = [];
  const handlers = {
    apply: (obj: KubeObject) => {
      log.push(`apply ${obj.metadata?.finalizers}`);
      return Promise.resolve({});
    },
    cleanup: () => {
      log.push("cleanup");
      return log.length < 3 ? Promise.reject(new Error("not yet")) : Promise.resolve({});
    },
  };
  await finalizer(client, CONFIG_MAPS, await create("db"), OURS, handlers);
  await client.delete(CONFIG_MAPS, "db", { namespace });
  const deleting = await client.get(CONFIG_MAPS, "db", { namespace });
  assert.ok(deleting.metadata?.deletionTimestamp, "the finalizer did not hold the object");

  await assert.rejects(finalizer(client, CONFIG_MAPS, deleting, OURS, handlers), /not yet/);
  const stillThere = await client.get(CONFIG_MAPS, "db", { namespace });
  assert.deepEqual(stillThere.metadata?.finalizers, [OURS]);

  await finalizer(client, CONFIG_MAPS, stillThere, OURS, handlers);
  assert.deepEqual(log, [`apply ${OURS}`, "cleanup", "cleanup"]);
  const gone = await client.get(CONFIG_MAPS, "db", { namespace }).catch((e) => e);
  assert.ok(isNotFound(gone), `the object outlived its finalizer: ${JSON.stringify(gone)}`);
});
