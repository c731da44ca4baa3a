/**
 * Hostile response bodies (issue 16) and a raw HTTP server that sends them with any encoding, for the bounded-input
 * tests. The 1 GiB a decompression bomb expands to never exists in this process's memory.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import zlib from "node:zlib";

/** `[[[[…]]]]`: `bytes` of text, nested bytes/2 deep (the 8 MB answer that aborted V8 under the heap cap). */
export function nestedArray(bytes: number): Buffer {
  const half = Math.floor(bytes / 2);
  return Buffer.concat([Buffer.alloc(half, "["), Buffer.alloc(half, "]")]);
}

/** A flat, valid JSON object of about `bytes` bytes: `{"status":"ok","pad":"xxxx…"}`. */
export function bigFlatObject(bytes: number): Buffer {
  return Buffer.from(`{"status":"ok","response":{"type":"default"},"pad":"${"x".repeat(bytes)}"}`);
}

/**
 * gzip of `inflated` bytes (rounded up to 64 KiB) of JSON whitespace followed by `null` (valid JSON if read in full).
 * 1 GiB of spaces compresses to ~1 MiB. Cached per size.
 *
 * Assembled rather than compressed (zlib at level 9 over 1 GiB cost ~3 s of CPU per process): 4 MiB of spaces
 * deflated once with a full flush (Z_FULL_FLUSH: the segment ends byte-aligned and refers to nothing before it, so
 * the same bytes inflate to the same 4 MiB wherever they stand), repeated, then `null` as the final block, inside
 * gzip's header and trailer (RFC 1952: the CRC-32 of all the inflated bytes and their length mod 2^32). A streaming
 * gunzip of the result gives every byte back and checks the trailer.
 */
const bombs = new Map<number, Promise<Buffer>>();
export function gzipBomb(inflated: number): Promise<Buffer> {
  let bomb = bombs.get(inflated);
  if (!bomb) {
    bomb = Promise.resolve().then(() => {
      const SEGMENT = 4 * 1024 * 1024;
      const spaces = Math.ceil(inflated / (64 * 1024)) * 64 * 1024;
      const full = Math.floor(spaces / SEGMENT);
      const rest = spaces - full * SEGMENT;
      const flushed = (bytes: number) =>
        zlib.deflateRawSync(Buffer.alloc(bytes, " "), { level: 9, finishFlush: zlib.constants.Z_FULL_FLUSH });
      const tail = Buffer.from("null");
      const segment = flushed(SEGMENT);
      const parts: Buffer[] = Array.from({ length: full }, () => segment);
      if (rest > 0) parts.push(flushed(rest));
      parts.push(zlib.deflateRawSync(tail, { level: 9 }));
      let crc = 0;
      const block = Buffer.alloc(SEGMENT, " ");
      for (let i = 0; i < full; i++) crc = zlib.crc32(block, crc);
      if (rest > 0) crc = zlib.crc32(block.subarray(0, rest), crc);
      crc = zlib.crc32(tail, crc);
      // ID1 ID2, CM = deflate, no flags, no mtime, XFL = 2 (best compression), OS = 3 (Unix)
      const header = Buffer.from([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 2, 3]);
      const trailer = Buffer.alloc(8);
      trailer.writeUInt32LE(crc >>> 0, 0);
      trailer.writeUInt32LE((spaces + tail.length) % 2 ** 32, 4);
      return Buffer.concat([header, ...parts, trailer]);
    });
    bombs.set(inflated, bomb);
  }
  return bomb;
}

export type HostileAnswer = { status?: number; headers?: Record<string, string>; body: Buffer | string };

export type HostileServer = {
  url: string;
  /** Requests seen, by path and the `type` (info) or `method` (JSON-RPC) of their body. */
  seen: Array<{ path: string; kind: string }>;
  close(): Promise<void>;
};

/** A server on 127.0.0.1:0; `answer` decides each response (status, headers such as content-encoding, body). */
export async function startHostileServer(
  answer: (path: string, body: unknown) => HostileAnswer | Promise<HostileAnswer>,
): Promise<HostileServer> {
  const seen: HostileServer["seen"] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", async () => {
      let body: unknown;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
      } catch {
        body = undefined;
      }
      const b = body as { type?: unknown; method?: unknown; action?: { type?: unknown } } | undefined;
      const kind = String(b?.type ?? b?.method ?? b?.action?.type ?? "?");
      const path = req.url ?? "/";
      seen.push({ path, kind });
      try {
        const out = await answer(path, body);
        const payload = typeof out.body === "string" ? Buffer.from(out.body) : out.body;
        res.writeHead(out.status ?? 200, {
          "content-type": "application/json",
          "content-length": String(payload.length),
          ...(out.headers ?? {}),
        });
        res.end(payload);
      } catch {
        res.destroy();
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    seen,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
