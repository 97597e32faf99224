/**
 * Children anywhere against the real control plane of `hack/with_cluster.ts`:
 * a Gadget (the test's custom resource) copied into ConfigMaps of two other
 * namespaces, which no owner reference can reach. The copies carry owner
 * labels, an edit of one reconciles the Gadget back, and deleting the Gadget
 * deletes the copies before its finalizer lets it go.
 *
 *   deno run -A hack/with_cluster.ts -- deno test -A tests/integration/children_anywhere_test.ts
 */
import assert from "node:assert/strict";
import { CONFIG_MAPS } from "../../lib/kube/resources.ts";
import type { KubeObject } from "../../lib/kube/types.ts";
import { Semaphore } from "../../lib/async/semaphore.ts";
import { Caches } from "../../lib/runtime/cache/caches.ts";
import { Controller } from "../../lib/runtime/controller/controller.ts";
import { OWNER_LABELS, ownerKind } from "../../lib/runtime/children/owner_labels.ts";
import { controllerReference } from "../../lib/runtime/objects/owner_reference.ts";
import { createNamespace, deleteNamespace, getOrUndefined, waitFor } from "../_support/kube.ts";
import { type Gadget, gadget, GADGETS, gadgetScope } from "./_gadgets.ts";

type Copy = KubeObject & { data?: Record<string, string> };

Deno.test("a gadget's copies in two other namespaces carry owner labels, are restored when edited and go with it", async () => {
  await using s = await gadgetScope("anywhere");
  const { client, namespace } = s;
  const copies = [await createNamespace(client, "copy"), await createNamespace(client, "copy")];
  const caches = new Caches({ client, backoff: { initialMs: 100, maxMs: 1_000 } });
  const controller = new Controller<Gadget>({
    name: "gadget-copier",
    resource: GADGETS,
    owns: [{
      resource: CONFIG_MAPS,
      anywhere: true,
      labelSelector: `${OWNER_LABELS.kind}=${ownerKind(GADGETS)}`,
    }],
    async reconcile(owner, { children, signal }) {
      for (const into of copies) {
        await children.apply(CONFIG_MAPS, {
          apiVersion: "v1",
          kind: "ConfigMap",
          metadata: {
            name: `${owner.metadata!.name}-copy`,
            namespace: into,
            ownerReferences: [controllerReference(owner)],
          },
          data: { marker: owner.spec?.marker ?? "" },
        }, signal);
      }
      return {};
    },
  }, { client, semaphore: new Semaphore(4), caches });
  const stop = new AbortController();
  const running = Promise.all([caches.run(stop.signal), controller.run(stop.signal)]);
  try {
    await client.create(GADGETS, gadget("g", { marker: "hello" }), { namespace });
    const copy = (into: string) => getOrUndefined<Copy>(client, CONFIG_MAPS, "g-copy", into);
    for (const into of copies) {
      const made = await waitFor(`the copy in ${into}`, () => copy(into));
      assert.deepEqual(made.data, { marker: "hello" });
      assert.equal(made.metadata?.ownerReferences, undefined);
      assert.equal(made.metadata?.labels?.[OWNER_LABELS.namespace], namespace);
      assert.equal(made.metadata?.labels?.[OWNER_LABELS.name], "g");
    }
    const owner = await client.get(GADGETS, "g", { namespace });
    assert.deepEqual(owner.metadata?.finalizers, ["test.kinglet.dev/children"]);

    await client.patch(CONFIG_MAPS, "g-copy", { data: { marker: "edited" } }, {
      type: "merge",
      namespace: copies[0],
    });
    await waitFor("the edited copy restored", async () => {
      const restored = await copy(copies[0]!);
      return restored?.data?.marker === "hello";
    });

    await client.delete(GADGETS, "g", { namespace });
    await waitFor(
      "the gadget gone",
      async () => (await getOrUndefined(client, GADGETS, "g", namespace)) === undefined,
    );
    for (const into of copies) assert.equal(await copy(into), undefined, `a copy left in ${into}`);
  } finally {
    stop.abort();
    await running;
    for (const into of copies) await deleteNamespace(client, into);
  }
});
