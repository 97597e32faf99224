/**
 * The GPUs an InferenceService may ask for, and what it may do without one:
 * shared by its schema (`schema.ts`), its checks at run time (`kind.ts`) and
 * its rendering, with no zod loaded.
 *
 * @example
 * ```ts
 * import { GPU_TYPES, MAX_CPU_BATCH_SIZE } from "./gpu.ts";
 * GPU_TYPES.includes("A100"); // true
 * MAX_CPU_BATCH_SIZE; // 32
 * ```
 *
 * @module
 */

/** The GPU types kinglet schedules for; `none` runs on CPUs. */
export const GPU_TYPES = ["A100", "H100", "L40S", "none"] as const;

/** One of {@link GPU_TYPES}. */
export type GpuType = typeof GPU_TYPES[number];

/** Largest batch accepted without a GPU: beyond it, CPU serving only adds latency. */
export const MAX_CPU_BATCH_SIZE = 32;
