/**
 * Whether the API server streams lists, learned once and shared by every
 * watcher of one client.
 *
 * A streaming list is a watch with `sendInitialEvents=true` (the WatchList
 * feature): the server sends the current objects as events, then a bookmark,
 * and the same request goes on as the watch. Servers without the feature
 * (off by default in Kubernetes 1.30, 1.31 and 1.33, on in 1.32 and from
 * 1.34) answer the first such request with a 422. The first watcher refused says so once, at info, and from then on
 * every watcher of that client lists in pages, without asking again.
 *
 * @example
 * ```ts
 * import { StreamingLists } from "./streaming_lists.ts";
 * const lines: string[] = [];
 * const lists = new StreamingLists({ server: "https://10.0.0.1:6443", write: (l) => lines.push(l) });
 * lists.worth; // true: not refused yet
 * lists.refused("HTTP 422");
 * lists.refused("HTTP 422"); // a second watcher refused in the same moment: not told again
 * lists.worth; // false
 * lines.length; // 1
 * ```
 *
 * @module
 */
import { logger } from "../../log.ts";

/** Options of {@link StreamingLists}. */
export interface StreamingListsOptions {
  /** The API server's URL, for the log line. Defaults to "the API server". */
  server?: string;
  /** Where the one line goes. Defaults to the `watcher` logger at info. */
  write?: (line: string, properties: Record<string, unknown>) => void;
}

const log = logger("watcher");

/** What one API server answered to a streaming list; see the module documentation. */
export class StreamingLists {
  readonly #server: string;
  readonly #write: NonNullable<StreamingListsOptions["write"]>;
  #refused = false;

  /** Creates a record that has seen no refusal: streaming lists are worth a try. */
  constructor(options: StreamingListsOptions = {}) {
    this.#server = options.server ?? "the API server";
    this.#write = options.write ?? ((line, properties) => log.info(line, properties));
  }

  /** Whether a watcher should try a streaming list: true until the server refused one. */
  get worth(): boolean {
    return !this.#refused;
  }

  /**
   * Records that the server refused a streaming list, answering `answer`
   * (a status such as `HTTP 422`, never the server's message, whose
   * "Forbidden" would alarm on a healthy start). Logs once per server.
   */
  refused(answer: string): void {
    if (this.#refused) return;
    this.#refused = true;
    this.#write(
      "{server} does not stream lists (the WatchList feature is off there); every watch lists in pages",
      { server: this.#server, answer },
    );
  }
}
