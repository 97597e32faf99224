/**
 * The stop signal of a manager run without one: SIGINT or SIGTERM, as
 * controller-runtime's `SetupSignalHandler` (SIGINT alone on Windows, where
 * Deno cannot listen for SIGTERM).
 *
 * @module
 */

/** An `AbortSignal` that aborts on SIGINT or SIGTERM, listening until disposed. */
export interface TerminationSignal extends Disposable {
  /** Aborts on the first SIGINT or SIGTERM; its reason names the signal. */
  readonly signal: AbortSignal;
}

/** Listens for SIGINT and SIGTERM until the result is disposed. */
export function terminationSignal(): TerminationSignal {
  const stop = new AbortController();
  const names: Deno.Signal[] = Deno.build.os === "windows" ? ["SIGINT"] : ["SIGINT", "SIGTERM"];
  const listeners = names.map((name) => {
    const listener = () => stop.abort(new Error(`stopped by ${name}`));
    Deno.addSignalListener(name, listener);
    return [name, listener] as const;
  });
  return {
    signal: stop.signal,
    [Symbol.dispose]() {
      for (const [name, listener] of listeners) Deno.removeSignalListener(name, listener);
    },
  };
}
