/**
 * Bounded input for every HTTP response the daemon reads (docs/security.md, "Bounded input"): the body is read as
 * a stream, decompressed here (gzip, deflate, br) and counted AFTER decompression, and the read stops at
 * `maxBytes`; then the JSON text is scanned once for its nesting depth and its number of values before
 * `JSON.parse` ever sees it. Sized so that one hostile answer costs a few tens of MB at most, far below the
 * shipped heap cap (`--max-old-space-size=160`): a response over a bound is a typed BodyLimitError, never a
 * "heap out of memory" abort.
 *
 * got still does the request (agents, time-outs, abort signals, error codes); only the body is ours, so the
 * cap holds whatever Content-Length says (got's own progress count stops reporting once the decompressed
 * size passes a compressed Content-Length).
 */
import { finished, type Readable, type Transform } from "node:stream";
import { pipeline } from "node:stream/promises";
import zlib from "node:zlib";
import type { Got, OptionsInit } from "got";
import { BaseError } from "../../core/errors/base.js";

export type BodyLimits = {
  /** Largest body, counted after decompression (bytes). */
  maxBytes: number;
  /** Deepest nesting of arrays and objects. */
  maxDepth: number;
  /** Most JSON values in one body (array elements and object members, all levels): bounds array lengths too. */
  maxValues: number;
};

/**
 * The defaults, measured under `node --max-old-space-size=160` (docs/security.md): 300,000 values parse to at most
 * ~25 MB of heap whatever their shape (empty objects are the costliest), 8 MiB of text to 8 MB more. A real
 * `batchClearinghouseStates` answer for 50 users is ~150 KB and ~15,000 values.
 */
export const DEFAULT_BODY_LIMITS: Readonly<BodyLimits> = Object.freeze({
  maxBytes: 8 * 1024 * 1024,
  maxDepth: 64,
  maxValues: 300_000,
});

/** `/exchange` answers are a few hundred bytes (a status and a short message); 1 MiB is generous. */
export const EXCHANGE_BODY_LIMITS: Readonly<BodyLimits> = Object.freeze({
  ...DEFAULT_BODY_LIMITS,
  maxBytes: 1024 * 1024,
});

export type BodyLimitKind = "bytes" | "depth" | "values" | "encoding";

/** A response body over one of the bounds (or in an encoding we do not decode). */
export class BodyLimitError extends BaseError {
  override name = "BodyLimitError";
  readonly limit: BodyLimitKind;
  constructor(limit: BodyLimitKind, reason: string) {
    super(`Response body refused: ${reason}.`);
    this.limit = limit;
  }
  /** The reason alone, for callers that wrap it in their own error. */
  get reason(): string {
    return this.shortMessage.replace(/^Response body refused: /, "").replace(/\.$/, "");
  }
}

/** Throws BodyLimitError when the JSON text in `buf` nests deeper than `maxDepth` or holds more than `maxValues` values. Linear, no allocation. */
export function checkJsonBounds(
  buf: Uint8Array,
  { maxDepth, maxValues }: Pick<BodyLimits, "maxDepth" | "maxValues">,
): void {
  let depth = 0;
  let values = 0;
  let inString = false;
  // JSON's structural characters are ASCII; UTF-8 continuation bytes are >= 0x80, so scanning bytes is exact.
  for (let i = 0; i < buf.length; i++) {
    const c = buf[i]!;
    if (inString) {
      if (c === 0x5c)
        i++; // backslash: skip the escaped byte
      else if (c === 0x22) inString = false;
      continue;
    }
    if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      // [ {
      if (++depth > maxDepth) throw new BodyLimitError("depth", `JSON nested deeper than ${maxDepth} levels`);
      if (++values > maxValues) throw new BodyLimitError("values", `more than ${maxValues} JSON values`);
    } else if (c === 0x5d || c === 0x7d) depth--;
    else if (c === 0x2c) {
      // , (one more element or member)
      if (++values > maxValues) throw new BodyLimitError("values", `more than ${maxValues} JSON values`);
    }
  }
}

/** Parses JSON after checkJsonBounds; `undefined` when the text is not JSON (callers classify that themselves). */
export function parseBoundedJson(
  buf: Uint8Array,
  limits: Pick<BodyLimits, "maxDepth" | "maxValues">,
): unknown {
  checkJsonBounds(buf, limits);
  try {
    return JSON.parse(Buffer.from(buf.buffer, buf.byteOffset, buf.byteLength).toString("utf8")) as unknown;
  } catch {
    return undefined;
  }
}

function decoderFor(encoding: string | string[] | undefined): Transform | null {
  const value = (Array.isArray(encoding) ? encoding.join(",") : (encoding ?? "")).trim().toLowerCase();
  if (value === "" || value === "identity") return null;
  // Trailing flush options let a truncated stream end as an error, not hang.
  if (value === "gzip" || value === "x-gzip")
    return zlib.createGunzip({ finishFlush: zlib.constants.Z_SYNC_FLUSH });
  if (value === "deflate") return zlib.createInflate({ finishFlush: zlib.constants.Z_SYNC_FLUSH });
  if (value === "br")
    return zlib.createBrotliDecompress({ finishFlush: zlib.constants.BROTLI_OPERATION_FLUSH });
  throw new BodyLimitError("encoding", `unsupported content-encoding ${JSON.stringify(value.slice(0, 40))}`);
}

export type BoundedResponse = {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** The decompressed body, at most `maxBytes`. */
  body: Buffer;
};

/**
 * Sends one request with `client` (a got instance; `decompress` is turned off: we decode) and reads the body under
 * `maxBytes`, counted after decompression. Throws BodyLimitError over the bound (the request is destroyed at once,
 * so a decompression bomb costs one zlib chunk of memory past the cap), or got's own error when there is no answer.
 */
export async function requestBounded(
  client: Got,
  url: string,
  options: Omit<OptionsInit, "isStream" | "decompress" | "responseType" | "url">,
  { maxBytes }: Pick<BodyLimits, "maxBytes">,
): Promise<BoundedResponse> {
  // The abort signal is handled here, not by got: got's stream mode never removes its listener, so a
  // long-lived signal would collect one per request.
  const { signal, ...rest } = options;
  if (signal?.aborted) throw abortError();
  const stream = client.stream(url, {
    ...rest,
    decompress: false,
    headers: { ...(options.headers ?? {}), "accept-encoding": "gzip, deflate, br" },
  });
  const onAbort = () => stream.destroy(abortError());
  signal?.addEventListener("abort", onAbort, { once: true });
  try {
    return await readBounded(stream, maxBytes);
  } finally {
    signal?.removeEventListener("abort", onAbort);
  }
}

/** `requestBounded` with method POST. */
export function postBounded(
  client: Got,
  url: string,
  options: Omit<OptionsInit, "isStream" | "decompress" | "responseType" | "url" | "method">,
  limits: Pick<BodyLimits, "maxBytes">,
): Promise<BoundedResponse> {
  return requestBounded(client, url, { ...options, method: "POST" }, limits);
}

function abortError(): Error {
  const error = new Error("The operation was aborted") as NodeJS.ErrnoException;
  error.name = "AbortError";
  error.code = "ABORT_ERR";
  return error;
}

async function readBounded(stream: ReturnType<Got["stream"]>, maxBytes: number): Promise<BoundedResponse> {
  const response = await new Promise<{
    statusCode: number;
    headers: Record<string, string | string[] | undefined>;
  }>((resolve, reject) => {
    stream.once("response", resolve);
    stream.once("error", reject);
  });
  const declared = Number(response.headers["content-length"]);
  const encoding = response.headers["content-encoding"];
  let decoder: Transform | null;
  try {
    decoder = decoderFor(encoding);
    if (decoder === null && Number.isFinite(declared) && declared > maxBytes)
      throw new BodyLimitError("bytes", `body of ${declared} bytes exceeds ${maxBytes} bytes`);
  } catch (error) {
    stream.destroy();
    throw error;
  }
  const chunks: Buffer[] = [];
  let total = 0;
  // Kept aside: tearing the stream down makes got report its own abort, which must not hide the reason.
  let overLimit: BodyLimitError | undefined;
  /** Counts a chunk against the cap (after decompression when there is a decoder); false once past it. */
  const take = (chunk: Buffer): boolean => {
    total += chunk.length;
    if (total > maxBytes) {
      overLimit = new BodyLimitError(
        "bytes",
        `body exceeds ${maxBytes} bytes${decoder ? " after decompression" : ""}`,
      );
      return false;
    }
    chunks.push(chunk);
    return true;
  };
  const source = stream as unknown as Readable;
  if (!decoder) {
    // The usual answer (not compressed): its chunks as they come, no pipeline and no async iterator, which is
    // stream machinery a cold push would page in for a body of a few hundred bytes (CPU per hour counts it).
    await new Promise<void>((resolve, reject) => {
      const onData = (chunk: Buffer) => {
        if (take(chunk)) return;
        source.off("data", onData);
        source.destroy();
        reject(overLimit);
      };
      source.on("data", onData);
      finished(source, (error) => (error ? reject(overLimit ?? error) : resolve()));
    });
    return { status: response.statusCode, headers: response.headers, body: Buffer.concat(chunks, total) };
  }
  const sink = async (decoded: AsyncIterable<Buffer>) => {
    for await (const chunk of decoded) if (!take(chunk)) throw overLimit;
  };
  try {
    await pipeline(source, decoder, sink);
  } catch (error) {
    if (overLimit) throw overLimit;
    const code = (error as NodeJS.ErrnoException).code;
    if (typeof code === "string" && /^(Z_|ERR_BROTLI|ERR__ERROR_FORMAT)/.test(code))
      throw new BodyLimitError("encoding", `body is not valid ${String(encoding)} (${code})`);
    throw error;
  }
  return { status: response.statusCode, headers: response.headers, body: Buffer.concat(chunks, total) };
}
