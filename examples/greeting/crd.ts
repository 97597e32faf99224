/**
 * The Greeting CustomResourceDefinition: a structural schema, a status
 * subresource (so status writes do not bump `metadata.generation`) and
 * printer columns for `kubectl get greetings`.
 *
 * @module
 */
import type { KubeObject } from "../../lib/kube/mod.ts";
import { GREETINGS } from "./greeting.ts";

/** The CRD, ready for server-side apply. */
export const GREETING_CRD: KubeObject = {
  apiVersion: "apiextensions.k8s.io/v1",
  kind: "CustomResourceDefinition",
  metadata: { name: `${GREETINGS.plural}.${GREETINGS.group}` },
  spec: {
    group: GREETINGS.group,
    scope: "Namespaced",
    names: { plural: GREETINGS.plural, singular: "greeting", kind: GREETINGS.kind },
    versions: [{
      name: GREETINGS.version,
      served: true,
      storage: true,
      subresources: { status: {} },
      additionalPrinterColumns: [
        { name: "Message", type: "string", jsonPath: ".status.message" },
      ],
      schema: {
        openAPIV3Schema: {
          type: "object",
          properties: {
            spec: {
              type: "object",
              required: ["name"],
              properties: {
                name: { type: "string", minLength: 1 },
                greeting: { type: "string" },
              },
            },
            status: {
              type: "object",
              properties: {
                message: { type: "string" },
                configMap: { type: "string" },
                observedGeneration: { type: "integer" },
              },
            },
          },
        },
      },
    }],
  },
};
