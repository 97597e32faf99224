/**
 * The Widget operator as `deno task deploy` (scripts/deploy.ts) describes it:
 * its deploy files (RBAC derived from the controller, Deployment, image,
 * systemd units) are written from this, and main.ts reads its Lease and
 * variables from it.
 *
 * @module
 */
import type { OperatorDescription } from "@kinglet/kinglet/deploy";
import { widgetController } from "./controller.ts";

/** The operator: its name, variables, image, namespace, Lease, controllers, memory limit. */
export const operator = {
  name: "widget-operator",
  // The prefix of its variables (WIDGET_OPERATOR_MEMORY_LIMIT), which deno task build grants.
  envPrefix: "WIDGET_OPERATOR_",
  // Replace with the registry you push the image to (deploy/Dockerfile.scratch).
  image: "registry.example.com/widget-operator:0.1.0",
  namespace: "widget-operator-system",
  leaseName: "widget-operator-leader",
  controllers: [widgetController],
  memoryLimit: "128Mi",
  // What deno task crds writes; deploy/kustomization.yaml applies it before the operator.
  crds: ["crds/widgets.example.org.yaml"],
  env: [{
    name: "HEALTH_ADDRESS",
    value: ":8081",
    comment: ["/healthz and /readyz for the kubelet; /metrics stays on loopback."],
  }],
} satisfies OperatorDescription;
