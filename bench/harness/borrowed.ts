/**
 * What the bench takes from the rest of the repository that is not a public
 * face of it, in one place: the local control plane each run starts
 * (`hack/cluster.ts`), free ports for the operator's endpoints and the quiet
 * runner of a target's build (private helpers of `lib/testing` and `hack/`),
 * and the V8 flags `deno task start` runs kinglet with. The rest of the bench
 * imports these from here, so that when the control plane and its helpers
 * move, this file is the one to change.
 *
 * @example
 * ```ts ignore
 * import { freePorts, startCluster } from "./borrowed.ts";
 * const [metricsPort, probePort] = freePorts(2);
 * const cluster = await startCluster();
 * ```
 *
 * @module
 */
export { type Cluster, startCluster } from "../../hack/cluster.ts";
export { V8_FLAGS } from "../../hack/_permissions.ts";
export { runQuiet } from "../../hack/_process.ts";
export { freePorts } from "../../lib/testing/_process.ts";
