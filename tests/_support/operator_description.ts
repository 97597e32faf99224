/**
 * A sample operator description for lib/deploy's tests: two controllers,
 * `mirror` owning Deployments and `reflection` watching ConfigMaps.
 */
import type { OperatorDescription } from "../../lib/deploy/mod.ts";
import { CONFIG_MAPS, DEPLOYMENTS, type KubeObject, type Resource } from "../../lib/kube/mod.ts";
import type { ControllerSpec } from "../../lib/runtime/mod.ts";

const MIRRORS: Resource = {
  group: "example.dev",
  version: "v1alpha1",
  plural: "mirrors",
  kind: "Mirror",
  namespaced: true,
};
const REFLECTIONS: Resource = { ...MIRRORS, plural: "reflections", kind: "Reflection" };

const mirror: ControllerSpec<KubeObject> = {
  name: "mirror",
  resource: MIRRORS,
  owns: [{ resource: DEPLOYMENTS }],
  reconcile: () => Promise.resolve({}),
};
const reflection: ControllerSpec<KubeObject> = {
  name: "reflection",
  resource: REFLECTIONS,
  watches: [{ resource: CONFIG_MAPS, map: () => [] }],
  reconcile: () => Promise.resolve({}),
};

/** The sample: mirrors own Deployments; reflections watch ConfigMaps. */
export const SAMPLE: OperatorDescription = {
  name: "mirror-operator",
  envPrefix: "MIRROR_",
  image: "ghcr.io/example/mirror-operator:0.1.0",
  memoryLimit: "192Mi",
  crds: ["crds/reflections.example.dev.yaml", "crds/mirrors.example.dev.yaml"],
  controllers: [mirror, reflection],
};
