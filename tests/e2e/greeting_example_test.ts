/**
 * The example operator of the README's "Write your own operator", run as its
 * readers run it (`deno run examples/greeting/main.ts` with the permissions
 * the README gives), against the real control plane.
 */
import assert from "node:assert/strict";
import { CONFIG_MAPS, type KubeObject } from "../../lib/kube/mod.ts";
import { type Greeting, greetings } from "../../examples/greeting/schema.ts";
import { startExample } from "./_example.ts";
import {
  adminClient,
  createNamespace,
  deleteNamespace,
  eventsFor,
  getOrUndefined,
  waitFor,
} from "../_support/kube.ts";

function greeting(namespace: string, name: string, spec: { name: string }): KubeObject {
  return {
    apiVersion: "example.kinglet.dev/v1",
    kind: "Greeting",
    metadata: { name, namespace },
    spec,
  };
}

Deno.test("the Greeting example renders, repairs, updates and says goodbye", async (t) => {
  const client = await adminClient();
  const example = startExample("greeting");
  let ns: string | undefined;
  try {
    await example.ready();
    ns = await createNamespace(client, "e2e-greeting");
    const namespace = ns;
    const message = (expected: string) =>
      waitFor(`ConfigMap ada-greeting to say "${expected}"`, async () => {
        const cm = await getOrUndefined<KubeObject & { data?: { message?: string } }>(
          client,
          CONFIG_MAPS,
          "ada-greeting",
          namespace,
        );
        return cm?.data?.message === expected && cm;
      });

    await t.step(
      "a new Greeting gets its ConfigMap, a status, an Event and a finalizer",
      async () => {
        await client.create(greetings.resource, greeting(namespace, "ada", { name: "Ada" }));
        const cm = await message("Hello, Ada!");
        const ada = await waitFor("the Greeting's status", async () => {
          const g = await client.get<Greeting>(greetings.resource, "ada", { namespace });
          return g.status?.message === "Hello, Ada!" && g;
        });
        assert.equal(ada.status?.configMap, "ada-greeting");
        assert.equal(ada.status?.observedGeneration, ada.metadata?.generation);
        assert.deepEqual(ada.metadata?.finalizers, ["example.kinglet.dev/farewell"]);
        assert.equal(cm.metadata?.ownerReferences?.[0]?.uid, ada.metadata?.uid);
        await waitFor(
          "a Rendered Event",
          async () => (await eventsFor(client, namespace, "ada", "Rendered")).length > 0,
        );
      },
    );

    await t.step("a deleted ConfigMap comes back", async () => {
      await client.delete(CONFIG_MAPS, "ada-greeting", { namespace });
      await message("Hello, Ada!");
    });

    await t.step("a changed spec renders a new message", async () => {
      await client.patch(greetings.resource, "ada", { spec: { greeting: "Welcome" } }, {
        type: "merge",
        namespace,
      });
      await message("Welcome, Ada!");
    });

    await t.step("a deleted Greeting says goodbye, then goes with its ConfigMap", async () => {
      await client.delete(greetings.resource, "ada", { namespace });
      await waitFor(
        "the Greeting to be gone",
        async () =>
          (await getOrUndefined(client, greetings.resource, "ada", namespace)) === undefined,
      );
      const farewell = await waitFor(
        "a Farewell Event",
        async () => (await eventsFor(client, namespace, "ada", "Farewell"))[0],
      );
      assert.equal(farewell.note, "Goodbye, Ada!");
      await waitFor(
        "the ConfigMap to be collected",
        async () =>
          (await getOrUndefined(client, CONFIG_MAPS, "ada-greeting", namespace)) === undefined,
      );
    });

    assert.equal(await example.stop(), 0, example.output());
  } finally {
    await example.stop();
    if (ns) await deleteNamespace(client, ns);
    client.close();
  }
});
