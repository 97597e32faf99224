/**
 * A throwaway custom resource for controller and manager tests: `Gadget`
 * (`gadgets.test.kinglet.dev/v1`, namespaced, with a status subresource, so a
 * status write does not bump `metadata.generation`), installed once per test
 * process, plus the scaffolding around it: a client and a fresh namespace per
 * test, and gadgets and their owned children.
 *
 * @module
 */
import { KubeClient } from "../../lib/kube/client.ts";
import { loadConfig } from "../../lib/kube/config.ts";
import { isAlreadyExists } from "../../lib/kube/errors.ts";
import { CUSTOM_RESOURCE_DEFINITIONS } from "../../lib/kube/resources.ts";
import type { KubeObject, Resource } from "../../lib/kube/types.ts";
import { testKubeconfig } from "../_support/cluster.ts";
import { createNamespace, deleteNamespace, waitFor } from "../_support/kube.ts";

/** The `Gadget` resource. */
export const GADGETS: Resource = {
  group: "test.kinglet.dev",
  version: "v1",
  plural: "gadgets",
  kind: "Gadget",
  namespaced: true,
};

/** What a test reconciler reads from a gadget; the schema keeps any field. */
export interface GadgetSpec {
  size?: number;
  /** How long a reconcile of this gadget takes, when the test's reconciler honours it. */
  sleepMs?: number;
  /** A value that must never leak out of the cache, e.g. into `/debug/cache`. */
  marker?: string;
}

/** A `Gadget` object. */
export interface Gadget extends KubeObject {
  spec?: GadgetSpec;
  status?: Record<string, unknown>;
}

const CRD_NAME = `${GADGETS.plural}.${GADGETS.group}`;

const CRD: KubeObject = {
  apiVersion: "apiextensions.k8s.io/v1",
  kind: "CustomResourceDefinition",
  metadata: { name: CRD_NAME },
  spec: {
    group: GADGETS.group,
    scope: "Namespaced",
    names: { plural: "gadgets", singular: "gadget", kind: "Gadget", listKind: "GadgetList" },
    versions: [{
      name: GADGETS.version,
      served: true,
      storage: true,
      subresources: { status: {} },
      schema: {
        openAPIV3Schema: {
          type: "object",
          properties: {
            spec: { type: "object", "x-kubernetes-preserve-unknown-fields": true },
            status: { type: "object", "x-kubernetes-preserve-unknown-fields": true },
          },
        },
      },
    }],
  },
};

let installed: Promise<void> | undefined;

/** Installs the Gadget CRD (once per process) and waits until gadgets can be listed. */
export function installGadgets(client: KubeClient): Promise<void> {
  installed ??= (async () => {
    try {
      await client.create(CUSTOM_RESOURCE_DEFINITIONS, CRD);
    } catch (error) {
      // Another test file of this run installed it first.
      if (!isAlreadyExists(error)) throw error;
    }
    await waitFor("the Gadget CRD to be established", async () => {
      const crd = await client.get(CUSTOM_RESOURCE_DEFINITIONS, CRD_NAME);
      const conditions = (crd.status as { conditions?: { type: string; status: string }[] })
        ?.conditions;
      return conditions?.some((c) => c.type === "Established" && c.status === "True");
    });
    await waitFor("gadgets to be served", async () => {
      await client.list(GADGETS, { namespace: "default", limit: 1 });
      return true;
    });
  })();
  return installed;
}

/** An admin client and a fresh namespace, both cleaned up on dispose. */
export async function namespaceScope(prefix: string) {
  const client = new KubeClient(await loadConfig({ kubeconfig: testKubeconfig() }));
  const namespace = await createNamespace(client, prefix);
  return {
    client,
    namespace,
    async [Symbol.asyncDispose]() {
      try {
        await deleteNamespace(client, namespace);
      } finally {
        client.close();
      }
    },
  };
}

/** {@link namespaceScope} with the Gadget CRD installed. */
export async function gadgetScope(prefix: string) {
  const scope = await namespaceScope(prefix);
  await installGadgets(scope.client);
  return scope;
}

/** A gadget to create. */
export function gadget(name: string, spec: GadgetSpec = {}, finalizers?: string[]): Gadget {
  return {
    apiVersion: `${GADGETS.group}/${GADGETS.version}`,
    kind: GADGETS.kind,
    metadata: { name, ...(finalizers && { finalizers }) },
    spec,
  };
}

/** A controller reference to `owner`, for its children. */
export function controllerRef(owner: KubeObject) {
  return {
    apiVersion: owner.apiVersion ?? `${GADGETS.group}/${GADGETS.version}`,
    kind: owner.kind ?? GADGETS.kind,
    name: owner.metadata?.name ?? "",
    uid: owner.metadata?.uid ?? "",
    controller: true,
  };
}

/** `namespace/name`. */
export function keyOf(namespace: string, name: string): string {
  return `${namespace}/${name}`;
}

/** Resolves after `ms` milliseconds. */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Polls a synchronous condition every 20 ms, so timings measured around it stay sharp. */
export async function until(what: string, check: () => boolean, timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) {
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    }
    await sleep(20);
  }
}

/** Writes a line to standard output, for figures a test reports. */
export function report(line: string): void {
  Deno.stdout.writeSync(new TextEncoder().encode(`${line}\n`));
}
