/**
 * One HTTP/1.1 connection: it writes a request and reads the answer's head
 * and body (`Content-Length`, `Transfer-Encoding: chunked`, or until the
 * server closes), through one read buffer that lives as long as the socket.
 *
 * A caller must know: requests are not pipelined, so a connection carries
 * one exchange at a time, and it may carry the next only once the body was
 * read to its end and {@link ResponseHead.keepAlive} is true. Pieces of the
 * body are views of the read buffer, valid until the next read on the
 * connection. The server closing the connection before any byte of the
 * answer is a {@link ClosedBeforeAnswer}, which the pool may retry; every
 * other broken answer is an {@link Http1ProtocolError} or the socket's error.
 *
 * @module
 */

/** A head longer than this is refused (the API server's own limit for requests is 1 MiB). */
const MAX_HEAD_BYTES = 1024 * 1024;
/** A chunk-size or trailer line longer than this is refused. */
const MAX_LINE_BYTES = 8 * 1024;
/** Enough for a typical answer and its head in one read; TLS records are at most 16 KiB. */
const BUFFER_BYTES = 16 * 1024;
const CR = 13;
const LF = 10;

const decoder = new TextDecoder();
/** What follows the data of a chunked body's last chunk when there are no trailers. */
const LAST_CHUNK = new TextEncoder().encode("\r\n0\r\n\r\n");

/** How the end of a body is found. */
const enum Framing {
  Length,
  Chunked,
  UntilClose,
}

/** The status line and the headers of an answer, parsed as far as framing needs. */
export interface ResponseHead {
  status: number;
  statusText: string;
  /** The header lines, unparsed: only an error answer reads them (see {@link headerValues}). */
  lines: string[];
  /** Whether the connection may carry another request once the body is read. */
  keepAlive: boolean;
}

/** The server answered with something that is not HTTP/1.1. */
export class Http1ProtocolError extends Error {
  /** Always `Http1ProtocolError`. */
  override readonly name = "Http1ProtocolError";
}

/** The server closed the connection before sending a byte of the answer. */
export class ClosedBeforeAnswer extends Error {
  /** Always `ClosedBeforeAnswer`. */
  override readonly name = "ClosedBeforeAnswer";
}

/** The `[name, value]` pairs of head lines, names lower-cased. */
export function headerValues(lines: readonly string[]): [string, string][] {
  return lines.map((line) => {
    const colon = line.indexOf(":");
    return [line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim()];
  });
}

/** A socket, its read buffer and where the current answer's body stands. */
export class Http1Connection {
  readonly #conn: Deno.Conn;
  #buf = new Uint8Array(BUFFER_BYTES);
  /** Unread bytes are `#buf[#start, #end)`. */
  #start = 0;
  #end = 0;
  #framing = Framing.Length;
  /** Body bytes left: of the whole body (Length) or of the current chunk (Chunked). */
  #left = 0;
  /** Whether a chunk of the current chunked body was read, so a CRLF ends it before the next size. */
  #inChunks = false;
  /** Set once a chunked body's last chunk and trailers were read. */
  #chunkedDone = false;
  #closed = false;
  /** Whether a byte of the current answer arrived: until then, a close may be an idle timeout. */
  answered = false;
  /** Exchanges completed on this connection. */
  served = 0;
  /** `performance.now()` when it last went back to the pool. */
  idleSince = 0;
  /** The pool's generation when it was opened; an older one is closed on release. */
  readonly generation: number;
  /**
   * The read posted while the connection waits in the pool (see {@link rest}):
   * the first bytes of the next answer, or the news that the server or the
   * network closed it.
   */
  #posted: Promise<number | null> | undefined;
  #resting = false;
  /** Anything the posted read gets while resting, bytes no request asked for included, ends it. */
  readonly #restEnded = () => {
    if (this.#resting) this.close();
  };

  constructor(conn: Deno.Conn, generation: number) {
    this.#conn = conn;
    this.generation = generation;
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** Whether bytes arrived that no answer accounts for, which makes the connection unusable. */
  get hasUnreadBytes(): boolean {
    return this.#end > this.#start;
  }

  /** Closes the socket; a pending read or write then fails. Idempotent. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    try {
      this.#conn.close();
    } catch {
      // Already closed by Deno after an error.
    }
  }

  /**
   * Leaves the connection waiting in the pool with a read posted, so that a
   * close while it waits (the server's idle timeout, a network cut) closes it
   * at once instead of failing the next request sent on it. The posted read
   * does not keep the process alive. Call only when no byte is unread.
   */
  rest(): void {
    this.#start = this.#end = 0;
    this.#resting = true;
    this.#conn.unref();
    const posted = this.#posted = this.#conn.read(this.#buf);
    posted.then(this.#restEnded, this.#restEnded);
  }

  /** Takes the connection out of the pool for the next exchange; its posted read carries on. */
  wake(): void {
    this.#resting = false;
    this.#conn.ref();
  }

  /** Writes all of `bytes`: head and body in one buffer, so Nagle has nothing to hold back. */
  async write(bytes: Uint8Array): Promise<void> {
    this.answered = false;
    for (let written = 0; written < bytes.length;) {
      written += await this.#conn.write(written ? bytes.subarray(written) : bytes);
    }
  }

  /** Reads the head of the answer, skipping 1xx interim answers, and prepares for its body. */
  async readHead(hasBody: boolean): Promise<ResponseHead> {
    for (;;) {
      const text = await this.#readHeadText();
      const lines = text.split("\r\n");
      const statusLine = lines[0] ?? "";
      const status = Number(statusLine.slice(9, 12));
      if (!statusLine.startsWith("HTTP/1.") || (statusLine.length > 12 && statusLine[12] !== " ")) {
        throw new Http1ProtocolError(
          `the answer does not start with a status line: ${quote(text)}`,
        );
      }
      if (!(status >= 100 && status <= 599)) {
        throw new Http1ProtocolError(`the status line has no valid code: ${quote(statusLine)}`);
      }
      if (status < 200) continue;
      lines.shift();
      const head = this.#frame(status, statusLine.slice(13), lines, hasBody);
      // HTTP/1.0 closes after each answer unless asked otherwise, which we never do.
      if (statusLine[7] === "0") head.keepAlive = false;
      return head;
    }
  }

  /**
   * The next piece of the body as a view of the read buffer, valid until the
   * next read; `null` once the body is complete.
   *
   * @throws {Http1ProtocolError} when the connection closes mid-body or a chunk is malformed.
   */
  async piece(): Promise<Uint8Array | null> {
    if (this.#framing === Framing.Chunked && this.#left === 0) {
      if (this.#chunkedDone || !await this.#nextChunk()) return null;
    } else if (this.#framing === Framing.Length && this.#left === 0) {
      return null;
    }
    if (this.#end === this.#start && !await this.#fill()) {
      if (this.#framing === Framing.UntilClose) return null;
      throw new Http1ProtocolError("the connection closed before the end of the answer");
    }
    const available = this.#end - this.#start;
    const take = this.#framing === Framing.UntilClose ? available : Math.min(available, this.#left);
    const view = this.#buf.subarray(this.#start, this.#start + take);
    this.#start += take;
    this.#left -= take;
    return view;
  }

  /** The whole body as text. */
  async text(): Promise<string> {
    // The common answers arrived whole with their head: decode them where they lie, a sized body
    // or a chunked one in one chunk (how the API server writes an object past 2 KiB).
    if (this.#framing === Framing.Length && this.#end - this.#start >= this.#left) {
      return this.#decodeInPlace(this.#left, 0);
    }
    if (this.#framing === Framing.Chunked && await this.#nextChunk()) {
      const size = this.#left;
      if (this.#endsAfter(size, LAST_CHUNK)) return this.#decodeInPlace(size, LAST_CHUNK.length);
    }
    // Sized by what is known: the whole body, or the first chunk (most often the only one).
    let body = new Uint8Array(this.#framing === Framing.UntilClose ? BUFFER_BYTES : this.#left);
    let length = 0;
    for (let piece = await this.piece(); piece; piece = await this.piece()) {
      if (length + piece.length > body.length) {
        const grown = new Uint8Array(Math.max(body.length * 2, length + piece.length));
        grown.set(body.subarray(0, length));
        body = grown;
      }
      body.set(piece, length);
      length += piece.length;
    }
    return decoder.decode(body.subarray(0, length));
  }

  /** Decodes the next `length` buffered bytes and skips `after` more. */
  #decodeInPlace(length: number, after: number): string {
    const text = decoder.decode(this.#buf.subarray(this.#start, this.#start + length));
    this.#start += length + after;
    this.#left = 0;
    if (after) this.#chunkedDone = true;
    return text;
  }

  /** Whether the buffer holds `length` bytes and then exactly `tail`. */
  #endsAfter(length: number, tail: Uint8Array): boolean {
    const at = this.#start + length;
    if (this.#end - at !== tail.length) return false;
    for (let i = 0; i < tail.length; i++) if (this.#buf[at + i] !== tail[i]) return false;
    return true;
  }

  /** Reads bytes into the free end of the buffer, first making room; false at end of stream. */
  async #fill(): Promise<boolean> {
    if (this.#start === this.#end) {
      this.#start = this.#end = 0;
    } else if (this.#end === this.#buf.length) {
      if (this.#start > 0) {
        this.#buf.copyWithin(0, this.#start, this.#end);
        this.#end -= this.#start;
        this.#start = 0;
      } else {
        // Only a head or a line can fill the buffer unread; their limits bound the growth.
        const grown = new Uint8Array(this.#buf.length * 2);
        grown.set(this.#buf);
        this.#buf = grown;
      }
    }
    const posted = this.#posted;
    this.#posted = undefined;
    // A posted read fills the empty buffer from its start, where #start and #end stand.
    const n = await (posted ?? this.#conn.read(this.#buf.subarray(this.#end)));
    if (n === null) return false;
    this.answered = true;
    this.#end += n;
    return true;
  }

  async #readHeadText(): Promise<string> {
    // Offset from #start up to which no "\r\n\r\n" begins: kept relative, as a fill may compact.
    let scanned = 0;
    for (;;) {
      const end = findHeadEnd(this.#buf, this.#start + scanned, this.#end);
      if (end >= 0) {
        const text = decoder.decode(this.#buf.subarray(this.#start, end));
        this.#start = end + 4;
        return text;
      }
      scanned = Math.max(0, this.#end - this.#start - 3);
      if (this.#end - this.#start > MAX_HEAD_BYTES) {
        throw new Http1ProtocolError(
          `the head of the answer is longer than ${MAX_HEAD_BYTES} bytes`,
        );
      }
      if (!await this.#fill()) {
        if (this.#end === this.#start) {
          throw new ClosedBeforeAnswer("the server closed the connection");
        }
        throw new Http1ProtocolError("the connection closed in the middle of the answer's head");
      }
    }
  }

  #frame(status: number, statusText: string, lines: string[], hasBody: boolean): ResponseHead {
    let length: number | undefined;
    let chunked = false;
    let encoded = false;
    let close = false;
    for (const line of lines) {
      // Only the framing headers are read here; their names are short, so check the length first.
      const colon = line.indexOf(":");
      if (colon !== 14 && colon !== 17 && colon !== 10) continue;
      const name = line.slice(0, colon).toLowerCase();
      const value = line.slice(colon + 1).trim();
      if (name === "content-length") {
        const n = /^\d+$/.test(value) ? Number(value) : NaN;
        if (!Number.isSafeInteger(n) || length !== undefined && length !== n) {
          throw new Http1ProtocolError(`invalid Content-Length ${quote(value)}`);
        }
        length = n;
      } else if (name === "transfer-encoding") {
        encoded = true;
        chunked = /(?:^|,)\s*chunked\s*$/i.test(value);
      } else if (name === "connection") {
        close = /(?:^|,)\s*close\s*(?:,|$)/i.test(value);
      }
    }
    this.#chunkedDone = false;
    this.#inChunks = false;
    if (!hasBody || status === 204 || status === 304) {
      this.#framing = Framing.Length;
      this.#left = 0;
    } else if (chunked) {
      this.#framing = Framing.Chunked;
      this.#left = 0;
    } else if (length !== undefined && !encoded) {
      this.#framing = Framing.Length;
      this.#left = length;
    } else {
      this.#framing = Framing.UntilClose;
      close = true;
    }
    return { status, statusText, lines, keepAlive: !close };
  }

  /** Reads the next chunk-size line (after the previous chunk's CRLF); false after the last chunk. */
  async #nextChunk(): Promise<boolean> {
    if (this.#inChunks) {
      const end = await this.#readLine();
      if (end !== "") throw new Http1ProtocolError(`a chunk runs past its size: ${quote(end)}`);
    }
    this.#inChunks = true;
    const line = await this.#readLine();
    const semicolon = line.indexOf(";");
    const hex = (semicolon === -1 ? line : line.slice(0, semicolon)).trim();
    const size = /^[0-9a-fA-F]{1,12}$/.test(hex) ? parseInt(hex, 16) : NaN;
    if (Number.isNaN(size)) throw new Http1ProtocolError(`invalid chunk size ${quote(line)}`);
    if (size > 0) {
      this.#left = size;
      return true;
    }
    while (await this.#readLine() !== "");
    this.#chunkedDone = true;
    return false;
  }

  async #readLine(): Promise<string> {
    for (let from = this.#start;;) {
      const lf = this.#buf.subarray(0, this.#end).indexOf(LF, from);
      if (lf > this.#start && this.#buf[lf - 1] === CR) {
        const line = decoder.decode(this.#buf.subarray(this.#start, lf - 1));
        this.#start = lf + 1;
        return line;
      }
      if (lf !== -1) throw new Http1ProtocolError("a line of the answer ends without CR");
      if (this.#end - this.#start > MAX_LINE_BYTES) {
        throw new Http1ProtocolError(`a chunk line is longer than ${MAX_LINE_BYTES} bytes`);
      }
      const unread = this.#end - this.#start;
      if (!await this.#fill()) {
        throw new Http1ProtocolError("the connection closed before the end of the answer");
      }
      from = this.#start + unread;
    }
  }
}

/** Where "\r\n\r\n" starts in `buf[from, end)`, or -1. */
function findHeadEnd(buf: Uint8Array, from: number, end: number): number {
  const view = buf.subarray(0, end);
  for (let cr = view.indexOf(CR, from); cr !== -1 && cr + 3 < end; cr = view.indexOf(CR, cr + 1)) {
    if (buf[cr + 1] === LF && buf[cr + 2] === CR && buf[cr + 3] === LF) return cr;
  }
  return -1;
}

function quote(text: string): string {
  return JSON.stringify(text.length > 200 ? `${text.slice(0, 200)}...` : text);
}
