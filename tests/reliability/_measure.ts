/**
 * What the bad-input, fuzz, soak and security tests measure and how they
 * report it: one `figure:` line per measurement, the least-squares slope of a
 * series, and a process's resident memory.
 *
 * @module
 */

/** Prints one `figure:` line, the measured result a test reports. */
export function figure(text: string): void {
  Deno.stdout.writeSync(new TextEncoder().encode(`figure: ${text}\n`));
}

/** A sample of a series: `x` (e.g. seconds) and `y` (e.g. MiB). */
export interface Point {
  x: number;
  y: number;
}

/**
 * The slope of the least-squares line through `points`, in y units per x unit.
 *
 * @throws {RangeError} with fewer than two distinct x values.
 */
export function leastSquaresSlope(points: readonly Point[]): number {
  const n = points.length;
  const meanX = points.reduce((s, p) => s + p.x, 0) / n;
  const meanY = points.reduce((s, p) => s + p.y, 0) / n;
  let num = 0;
  let den = 0;
  for (const p of points) {
    num += (p.x - meanX) * (p.y - meanY);
    den += (p.x - meanX) ** 2;
  }
  if (!(den > 0)) {
    throw new RangeError(`Cannot fit a line: need two distinct x values, got ${n} points`);
  }
  return num / den;
}

/** Resident memory of a process in MiB, from /proc. */
export async function rssMiB(pid: number): Promise<number> {
  const status = await Deno.readTextFile(`/proc/${pid}/status`);
  const kb = Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1]);
  return kb / 1024;
}

/** `n` with one decimal. */
export function fixed1(n: number): string {
  return n.toFixed(1);
}
