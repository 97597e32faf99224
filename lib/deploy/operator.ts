/**
 * What an operator's deploy files are written from: an
 * {@link OperatorDescription} (its name, namespace, image, controller specs,
 * memory limit), checked all at once and completed with its defaults by
 * {@link describeOperator}. Every file of `deployFiles` is a function of
 * the {@link Operator} it returns, so a description that cannot be derived
 * is refused before a file is written, naming the spec and the field.
 *
 * @example
 * ```ts
 * import { describeOperator } from "./operator.ts";
 * import { CONFIG_MAPS } from "../kube/mod.ts";
 * const operator = describeOperator({
 *   name: "mirror-operator",
 *   envPrefix: "MIRROR_",
 *   image: "ghcr.io/example/mirror-operator:0.1.0",
 *   controllers: [{ name: "mirror", resource: CONFIG_MAPS }],
 * });
 * operator.namespace; // "mirror-operator-system"
 * operator.leaseName; // "mirror-operator-leader"
 * ```
 *
 * @module
 */
import {
  type DeployedWebhooks,
  describeWebhooks,
  type OperatorWebhooks,
} from "./webhook_declarations.ts";

/** A resource as RBAC names it: a `Resource` of `@kinglet/kinglet/kube` is one. */
export interface DeployedResource {
  /** The API group; `""` for the core group. */
  group: string;
  /** The lower-case plural RBAC names it by, e.g. `deployments`. */
  plural: string;
  /** The kind owner references name it by, e.g. `Deployment`. */
  kind: string;
  /** Whether its objects live in a namespace. */
  namespaced?: boolean;
}

/**
 * A rule a controller or the program declares, with why it is needed: an
 * `RbacRule` of `@kinglet/kinglet/runtime/rbac` is one.
 */
export interface DeclaredRule {
  /** API groups of the resources; `""` is the core group. */
  apiGroups: string[];
  /** Resources by plural, a subresource as `plural/subresource`. */
  resources: string[];
  /** Names the rule is limited to; absent means every object. */
  resourceNames?: string[];
  /** What may be done: `get`, `list`, `watch`, `create`, `patch`, … */
  verbs: string[];
  /** Why, one sentence a reviewer of the Role reads. */
  reason: string;
  /** Whether it is about no namespace (cluster-scoped resources). @default false */
  clusterScoped?: boolean;
}

/**
 * What the deploy files read of a controller: its declarations, never its
 * functions. A `ControllerSpec` of `@kinglet/kinglet/runtime` of any kind
 * is one, so a description lists specs of different kinds side by side.
 */
export interface DeployedController {
  /** The controller's name, which every reason of its rules names. */
  name: string;
  /** Its primary resource. */
  resource: DeployedResource;
  /** The kinds it owns, `anywhere` for children outside the owner's namespace. */
  owns?: readonly { resource: DeployedResource; anywhere?: boolean }[];
  /** The kinds it watches besides. */
  watches?: readonly { resource: DeployedResource }[];
  /** What its reconcile does by client. */
  rbac?: readonly DeclaredRule[];
  /** Its finalizer, added and removed by patch. */
  finalizer?: { name: string };
  /** Present when it writes its children itself (the rules come from `rbac` then). */
  applyChild?: unknown;
}

/** One environment variable of the operator's container, with why it is set. */
export interface EnvVar {
  /** The variable, e.g. `HEALTH_ADDRESS`. */
  name: string;
  /** Its value, e.g. `:8081`. */
  value: string;
  /** Comment lines above it, already wrapped. Defaults to none. */
  comment?: readonly string[];
}

/** A group of commented lines of the node's environment file. */
export interface EnvGroup {
  /** Comment lines above the group, already wrapped (without `# `). */
  comment: readonly string[];
  /** The lines, usually commented out with their defaults (`#MIRROR_X=1`). */
  lines: readonly string[];
}

/**
 * Sentences of the comments that name things only one operator has (its
 * flags, its tests, its README). Each defaults to a sentence true of any
 * operator described here; kinglet's own deploy files set them.
 */
export interface DeployNotes {
  /** Where the description lives, named in the header of generated RBAC. @default "scripts/deploy.ts" */
  source?: string;
  /** What proves the ClusterRole sufficient, after "Nothing else is granted: ". */
  rbacProof?: string;
  /** Paragraphs added to the ClusterRole's header. */
  clusterRole?: readonly string[];
  /** The flag whose default the Lease's namespace is, e.g. `--leader-election-namespace`. */
  leaseNamespaceFlag?: string;
  /** Where to read about the image, after "replace the placeholder with your registry". */
  imageHelp?: string;
  /** The file that defines the environment both the image and the units set. */
  environment?: string;
  /** What reads the memory limit. @default "the Manager's memoryLimit" */
  memoryLimitReader?: string;
  /** What bounds the drain on SIGTERM. @default "the Manager's drain (10s)" */
  shutdown?: string;
  /** Comment lines above the container's `args`, already wrapped. */
  args?: readonly string[];
  /** Comment lines above the resources: where the figures come from. */
  sizing?: readonly string[];
  /** How the binary is built, in parentheses after "the bundle of main.ts". */
  build?: string;
  /** The task named beside the binary in the unit. @default "deno task build" */
  buildTask?: string;
  /** What proves the image's file list complete. */
  rootfsProof?: readonly string[];
  /** The first lines of the environment file (the `# ` is added). */
  envHeader?: readonly string[];
}

/** Where the files go, relative to the project's root. */
export interface DeployLayout {
  /** The manifests and `systemd/`. @default "deploy" */
  deploy?: string;
  /** The Dockerfile of the FROM scratch image. @default "deploy/Dockerfile.scratch" */
  dockerfile?: string;
  /** The image's file list. @default "deploy/scratch_files.txt" */
  scratchFiles?: string;
}

/** An operator as its deploy files need it described. */
export interface OperatorDescription {
  /**
   * The operator's name, a DNS label: its binary (`dist/<name>-<target>`,
   * `/usr/local/bin/<name>`), units, labels, ClusterRole, and the default
   * of its namespace, ServiceAccount and Lease.
   */
  name: string;
  /** The prefix of the variables the operator reads, e.g. `MIRROR_`: it reads `<prefix>MEMORY_LIMIT`. */
  envPrefix: string;
  /** The image the Deployment runs, e.g. `ghcr.io/example/mirror-operator:0.1.0`. */
  image: string;
  /** The controllers it runs: its RBAC is derived from them (`controllerRules`). */
  controllers: readonly DeployedController[];
  /** Where it runs and keeps its Lease. @default `<name>-system` */
  namespace?: string;
  /** Its ServiceAccount. @default the name */
  serviceAccount?: string;
  /** The leader Lease it campaigns for with `--leader-elect`. @default `<name>-leader` */
  leaseName?: string;
  /** Rules the program needs besides its controllers, each with its reason. @default none */
  rules?: readonly DeclaredRule[];
  /**
   * The operator's CRD files, relative to the project's root and in one
   * folder, e.g. `["crds/mirrors.example.dev.yaml"]` (what its `deno task
   * crds` writes): a kustomization in that folder lists them, and deploy/'s
   * includes it. @default none
   */
  crds?: readonly string[];
  /** Hand-written manifests of deploy/ the kustomization applies too, after the bindings. */
  manifests?: readonly string[];
  /** The memory limit of the container and of the unit, in Ki, Mi or Gi. @default "128Mi" */
  memoryLimit?: string;
  /** The container's memory request. @default "64Mi" */
  memoryRequest?: string;
  /** The subcommand that runs the operator, before its flags (kinglet's `run`). @default none */
  command?: readonly string[];
  /** The container's flags after `--leader-elect`. @default none */
  flags?: readonly string[];
  /**
   * The flag that names a kubeconfig (`--kubeconfig`); without one the node
   * unit sets `KUBECONFIG`. @default none
   */
  kubeconfigFlag?: string;
  /** Variables the container sets besides the environment and the memory limit. */
  env?: readonly EnvVar[];
  /** Ports the container serves; probes use the one named `health`. @default health 8081 */
  ports?: readonly { name: string; port: number }[];
  /**
   * The node's environment file, group by group; `"memory-limit"` places
   * the memory limit's group. @default the memory limit's group alone
   */
  settings?: readonly (EnvGroup | "memory-limit")[];
  /** The task the image's build stage runs, with `--target`. @default "build" */
  compileTask?: string;
  /** What the build stage runs to assemble the root file system. @default "scripts/deploy.ts --rootfs" */
  rootfsScript?: string;
  /** The Deno version the image is built with. @default "2.9.6" */
  denoVersion?: string;
  /** Where the files go. */
  layout?: DeployLayout;
  /** Sentences of the comments. */
  notes?: DeployNotes;
  /**
   * The admission webhooks and conversions it serves: deploy writes their
   * configurations (webhooks.yaml in the cluster, beside the units for node
   * mode), the Service in front of the pod, the container's port and the
   * RBAC to inject its CA bundle and keep its certificate. Only their
   * declarations are read. @default none
   */
  webhooks?: DeployedWebhooks;
}

/** A checked description with every default filled in. */
export interface Operator extends
  Required<
    Omit<
      OperatorDescription,
      "layout" | "notes" | "rules" | "manifests" | "env" | "settings" | "webhooks"
    >
  > {
  /** {@link OperatorDescription.rules}, none when not given. */
  rules: readonly DeclaredRule[];
  /** {@link OperatorDescription.manifests}, none when not given. */
  manifests: readonly string[];
  /** {@link OperatorDescription.env}, none when not given. */
  env: readonly EnvVar[];
  /** {@link OperatorDescription.settings}, the memory limit's group alone when not given. */
  settings: readonly (EnvGroup | "memory-limit")[];
  /** Where the files go, every path filled in. */
  layout: Required<DeployLayout>;
  /** {@link OperatorDescription.notes}, empty when not given. */
  notes: DeployNotes;
  /** {@link OperatorDescription.webhooks}, checked; absent when it declares none. */
  webhooks?: OperatorWebhooks;
}

/** The Deno the image is built with, kinglet's own. */
export const DENO_VERSION = "2.9.6";

const DNS_LABEL = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;
const ENV_PREFIX = /^[A-Z][A-Z0-9_]*_$/;
const QUANTITY = /^([1-9][0-9]*)(Ki|Mi|Gi)$/;
const FLAG = /^--[a-z][-a-z0-9]*(=\S*)?$/;

/**
 * Checks `description` and fills in its defaults.
 *
 * @throws {TypeError} naming the field (and the controller, for a spec)
 * that cannot be derived: a name that is no DNS label, an env prefix that is
 * not upper case ending in `_`, an empty image, no controllers, a spec
 * without a name or a resource, a memory limit that is no `Ki`, `Mi` or
 * `Gi` quantity, a webhook declaration that cannot be written (see
 * `describeWebhooks`).
 */
export function describeOperator(description: OperatorDescription): Operator {
  const d = description;
  const refuse = (what: string): never => {
    throw new TypeError(`Cannot write the deploy files of ${JSON.stringify(d.name)}: ${what}`);
  };
  const label = (field: string, value: string | undefined) => {
    if (value !== undefined && (value.length > 63 || !DNS_LABEL.test(value))) {
      refuse(
        `'${field}' ${JSON.stringify(value)} is not a DNS label (lower-case letters, digits ` +
          `and '-', starting with a letter, at most 63), e.g. "mirror-operator"`,
      );
    }
  };
  if (typeof d.name !== "string") refuse("'name' is missing");
  label("name", d.name);
  label("namespace", d.namespace);
  label("serviceAccount", d.serviceAccount);
  if (d.leaseName !== undefined && !/^[a-z0-9]([-.a-z0-9]*[a-z0-9])?$/.test(d.leaseName)) {
    refuse(`'leaseName' ${JSON.stringify(d.leaseName)} is not a DNS subdomain`);
  }
  if (typeof d.envPrefix !== "string" || !ENV_PREFIX.test(d.envPrefix)) {
    refuse(
      `'envPrefix' ${JSON.stringify(d.envPrefix)} is not a variable prefix: upper-case ` +
        `letters, digits and '_', ending in '_', e.g. "MIRROR_"`,
    );
  }
  if (typeof d.image !== "string" || !/^\S+$/.test(d.image)) {
    refuse(`'image' ${JSON.stringify(d.image)} is no image reference, e.g. "ghcr.io/me/op:0.1.0"`);
  }
  if (!Array.isArray(d.controllers) || d.controllers.length === 0) {
    refuse("'controllers' is empty: name the ControllerSpecs the operator runs");
  }
  d.controllers.forEach((spec, i) => {
    if (typeof spec?.name !== "string" || spec.name === "") {
      refuse(`the spec 'controllers[${i}]' has no 'name'`);
    }
    if (spec.resource === undefined || spec.resource === null) {
      refuse(`the spec '${spec.name}' (controllers[${i}]) has no 'resource'`);
    }
    if (typeof spec.resource.plural !== "string" || spec.resource.plural === "") {
      refuse(`the spec '${spec.name}' (controllers[${i}]) has no 'resource.plural'`);
    }
    if (typeof spec.resource.kind !== "string" || spec.resource.kind === "") {
      refuse(`the spec '${spec.name}' (controllers[${i}]) has no 'resource.kind'`);
    }
  });
  for (const field of ["memoryLimit", "memoryRequest"] as const) {
    const value = d[field];
    if (value !== undefined && !QUANTITY.test(value)) {
      refuse(`'${field}' ${JSON.stringify(value)} is not a quantity in Ki, Mi or Gi, e.g. "128Mi"`);
    }
  }
  const crdFolders = new Set((d.crds ?? []).map((path) => path.replace(/[^/]*$/, "")));
  if (crdFolders.size > 1 || (d.crds ?? []).some((path) => !/^[^/.][^:]*\.ya?ml$/.test(path))) {
    refuse(
      `'crds' ${JSON.stringify(d.crds)} are not YAML files of one folder, relative to the ` +
        `project's root, e.g. ["crds/mirrors.example.dev.yaml"]`,
    );
  }
  for (const flag of [...(d.flags ?? []), ...(d.kubeconfigFlag ? [d.kubeconfigFlag] : [])]) {
    if (!FLAG.test(flag)) refuse(`the flag ${JSON.stringify(flag)} is not --name or --name=value`);
  }
  const deploy = d.layout?.deploy ?? "deploy";
  const ports = d.ports ?? [{ name: "health", port: 8081 }];
  const webhooks = describeWebhooks(d.webhooks, ports, refuse);
  return {
    name: d.name,
    envPrefix: d.envPrefix,
    image: d.image,
    controllers: d.controllers,
    namespace: d.namespace ?? `${d.name}-system`,
    serviceAccount: d.serviceAccount ?? d.name,
    leaseName: d.leaseName ?? `${d.name}-leader`,
    rules: d.rules ?? [],
    crds: d.crds ?? [],
    manifests: d.manifests ?? [],
    memoryLimit: d.memoryLimit ?? "128Mi",
    memoryRequest: d.memoryRequest ?? "64Mi",
    command: d.command ?? [],
    flags: d.flags ?? [],
    kubeconfigFlag: d.kubeconfigFlag ?? "",
    env: d.env ?? [],
    ports,
    settings: d.settings ?? ["memory-limit"],
    compileTask: d.compileTask ?? "build",
    rootfsScript: d.rootfsScript ?? "scripts/deploy.ts --rootfs",
    denoVersion: d.denoVersion ?? DENO_VERSION,
    layout: {
      deploy,
      dockerfile: d.layout?.dockerfile ?? `${deploy}/Dockerfile.scratch`,
      scratchFiles: d.layout?.scratchFiles ?? `${deploy}/scratch_files.txt`,
    },
    notes: d.notes ?? {},
    ...(webhooks && { webhooks }),
  };
}

/**
 * The memory limit as systemd's `MemoryMax=` writes it: its `M` is a
 * mebibyte, so `256Mi` is `256M`.
 */
export function systemdMemory(quantity: string): string {
  return quantity.replace(/i$/, "");
}
