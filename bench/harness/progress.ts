/**
 * What the harness tells the person running it. On a terminal, one status
 * line rewritten in place (scenario, phase, created/ready counts, current
 * RSS) with log lines scrolling above it; elsewhere (CI, a pipe, a file)
 * plain log lines only, with the status written out now and then so a long
 * wait still shows signs of life.
 *
 * @example
 * ```ts
 * import { Progress } from "./progress.ts";
 * const lines: string[] = [];
 * const progress = new Progress({ tty: false, write: (text) => lines.push(text) });
 * progress.log("starting the control plane");
 * progress.status("scale-50 default  create  created 10/50  ready 3  RSS 48.1 MB");
 * progress.done();
 * lines[0]; // "[bench] starting the control plane\n"
 * ```
 *
 * @module
 */

/** Options of {@link Progress}. */
export interface ProgressOptions {
  /** Whether output goes to a terminal. Defaults to whether standard error is one. */
  tty?: boolean;
  /** Defaults to writing to standard error. */
  write?: (text: string) => void;
  /** Without a terminal, how often the status is written as a line. Defaults to 15 000 ms. */
  plainStatusEveryMs?: number;
}

const encoder = new TextEncoder();

/** The harness' terminal output; see the module documentation. */
export class Progress {
  readonly #tty: boolean;
  readonly #write: (text: string) => void;
  readonly #plainEveryMs: number;
  #line = "";
  #lastPlain = -Infinity;

  constructor(options: ProgressOptions = {}) {
    this.#tty = options.tty ?? Deno.stderr.isTerminal();
    this.#write = options.write ?? ((text) => Deno.stderr.writeSync(encoder.encode(text)));
    this.#plainEveryMs = options.plainStatusEveryMs ?? 15_000;
  }

  /** Prints one log line (above the status line on a terminal). */
  log(message: string): void {
    if (this.#tty) {
      this.#write(`\r\x1b[2K[bench] ${message}\n${this.#line}`);
    } else {
      this.#write(`[bench] ${message}\n`);
    }
  }

  /** Replaces the status line; without a terminal, logs it at most every so often. */
  status(line: string): void {
    if (this.#tty) {
      this.#line = line.length > columns() ? `${line.slice(0, columns() - 1)}…` : line;
      this.#write(`\r\x1b[2K${this.#line}`);
      return;
    }
    const now = performance.now();
    if (now - this.#lastPlain < this.#plainEveryMs) return;
    this.#lastPlain = now;
    this.#write(`[bench] ${line}\n`);
  }

  /** Clears the status line. */
  done(): void {
    if (this.#tty && this.#line !== "") this.#write("\r\x1b[2K");
    this.#line = "";
  }
}

function columns(): number {
  try {
    // A pseudo-terminal without a size (script, some CI runners) reports 0 columns.
    return Deno.consoleSize().columns || 120;
  } catch {
    return 120;
  }
}
