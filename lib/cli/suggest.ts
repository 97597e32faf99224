/**
 * "Did you mean" for mistyped flags and commands: the closest known word by
 * edit distance, when it is close enough to be a likely typo.
 *
 * @example
 * ```ts
 * import { suggest } from "./suggest.ts";
 * suggest("instal", ["run", "install", "crds"]); // "install"
 * suggest("frobnicate", ["run", "install"]); // undefined
 * ```
 *
 * @module
 */

/**
 * The candidate nearest to `typed`, or undefined when none is within a third
 * of the longer word's length (at least one edit): beyond that a suggestion
 * is more often wrong than helpful. A candidate that starts with what was
 * typed (at least three characters) also counts, for truncated flags.
 */
export function suggest(typed: string, candidates: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const candidate of candidates) {
    const distance = editDistance(typed, candidate);
    const allowed = Math.max(1, Math.floor(Math.max(typed.length, candidate.length) / 3));
    const near = distance <= allowed || (typed.length >= 3 && candidate.startsWith(typed));
    if (near && distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  return best;
}

/** Levenshtein distance: insertions, deletions and substitutions, one each. */
export function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const substitution = previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1);
      current.push(Math.min(previous[j]! + 1, current[j - 1]! + 1, substitution));
    }
    previous = current;
  }
  return previous[b.length]!;
}
