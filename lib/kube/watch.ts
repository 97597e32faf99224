/**
 * Decodes the body of a watch response into events. The API server writes
 * one JSON object per line, but the network cuts the stream anywhere: a
 * chunk may end mid-line, mid-character, or hold many events.
 *
 * `ERROR` events become a thrown {@link ApiError} (a 410 gets reason "Gone",
 * so the caller knows to relist); a line that is not an event becomes a
 * {@link WatchDecodeError} quoting what arrived. Either way the stream is
 * cancelled and the iteration ends; nothing else in the process is affected.
 *
 * @example
 * ```ts
 * import { decodeWatchStream } from "./watch.ts";
 * const body = ReadableStream.from(['{"type":"ADDED","object":{"metadata":{"na', 'me":"a"}}}\n'])
 *   .pipeThrough(new TextEncoderStream());
 * for await (const event of decodeWatchStream(body, { path: "/api/v1/pods" })) {
 *   event.object.metadata?.name; // "a"
 * }
 * ```
 *
 * @module
 */
import { apiErrorFromStatus, describeError, TransportError, WatchDecodeError } from "./errors.ts";
import type { KubeObject, WatchEvent, WatchEventType } from "./types.ts";

/** Options of {@link decodeWatchStream}. */
export interface DecodeWatchOptions {
  /** The watched path, for error messages. */
  path: string;
  /**
   * The signal the request was made with. When it is aborted the stream
   * fails; the iteration then ends quietly instead of reporting an error.
   */
  signal?: AbortSignal;
  /**
   * Longest line accepted, in characters. Defaults to 16 Mi, far above the
   * size etcd allows for one object.
   */
  maxLineLength?: number;
}

const EVENT_TYPES: ReadonlySet<string> = new Set<WatchEventType | "ERROR">([
  "ADDED",
  "MODIFIED",
  "DELETED",
  "BOOKMARK",
  "ERROR",
]);

/**
 * Yields the events of a watch response body until the server ends the
 * stream. Breaking out of the loop (or calling the iterator's `return()`)
 * cancels the body, which closes the underlying request.
 *
 * @throws {ApiError} for an ERROR event.
 * @throws {WatchDecodeError} for a line that is not a watch event.
 * @throws {TransportError} when the connection fails mid-stream.
 */
export async function* decodeWatchStream<T extends KubeObject = KubeObject>(
  body: ReadableStream<Uint8Array>,
  options: DecodeWatchOptions,
): AsyncGenerator<WatchEvent<T>, void, undefined> {
  const maxLine = options.maxLineLength ?? 16 * 1024 * 1024;
  const reader = body.getReader();
  const decoder = new TextDecoder();
  // Pieces of the line not yet ended by a newline; joined only once it ends,
  // so a large object arriving in many chunks is not rescanned each time.
  let partial: string[] = [];
  let partialLength = 0;
  let finished = false;
  // Cancelling the reader ourselves ends a pending read at once, whatever
  // state the aborted fetch left the body in.
  const onAbort = () => void reader.cancel(options.signal?.reason).catch(() => {});
  if (options.signal?.aborted) onAbort();
  else options.signal?.addEventListener("abort", onAbort, { once: true });
  try {
    for (;;) {
      let chunk: ReadableStreamReadResult<Uint8Array>;
      try {
        chunk = await reader.read();
      } catch (e) {
        finished = true;
        if (options.signal?.aborted) return;
        throw new TransportError(
          `watch ${options.path}: the connection failed mid-stream: ${describeError(e)}`,
          { cause: e },
        );
      }
      if (chunk.done) {
        finished = true;
        if (options.signal?.aborted) return;
        const rest = partial.join("") + decoder.decode();
        if (rest.trim()) yield decodeLine<T>(rest, options.path, "the stream ended mid-event");
        return;
      }
      const text = decoder.decode(chunk.value, { stream: true });
      let start = 0;
      for (let nl = text.indexOf("\n"); nl !== -1; nl = text.indexOf("\n", start)) {
        const piece = text.slice(start, nl);
        const line = partial.length ? partial.join("") + piece : piece;
        partial = [];
        partialLength = 0;
        start = nl + 1;
        // Events already buffered are dropped once the caller aborted: it asked to stop.
        if (options.signal?.aborted) return;
        if (line.trim()) yield decodeLine<T>(line, options.path);
      }
      if (start < text.length) {
        partial.push(text.slice(start));
        partialLength += text.length - start;
        if (partialLength > maxLine) {
          const head = partial.join("").slice(0, 200);
          throw new WatchDecodeError(
            `watch ${options.path}: received more than ${maxLine} characters without a newline, ` +
              `which no watch event is: ${JSON.stringify(head)}...`,
            head,
          );
        }
      }
    }
  } finally {
    options.signal?.removeEventListener("abort", onAbort);
    if (!finished) await reader.cancel().catch(() => {});
    reader.releaseLock();
  }
}

function decodeLine<T extends KubeObject>(
  line: string,
  path: string,
  context?: string,
): WatchEvent<T> {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    throw garbage(line, path, context ?? "not JSON");
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw garbage(line, path, "JSON that is not an object");
  }
  const { type, object } = value as { type?: unknown; object?: unknown };
  if (typeof type !== "string" || !EVENT_TYPES.has(type)) {
    throw garbage(line, path, `unknown event type ${JSON.stringify(type ?? null)}`);
  }
  if (typeof object !== "object" || object === null || Array.isArray(object)) {
    throw garbage(line, path, `a ${type} event without an object`);
  }
  if (type === "ERROR") throw apiErrorFromStatus(object, 500, { verb: "watch", path });
  return { type: type as WatchEventType, object: object as T };
}

function garbage(line: string, path: string, why: string): WatchDecodeError {
  const received = line.length > 200 ? `${line.slice(0, 200)}...` : line;
  return new WatchDecodeError(
    `watch ${path}: received a line that is not a watch event (${why}): ${
      JSON.stringify(received)
    }`,
    received,
  );
}
