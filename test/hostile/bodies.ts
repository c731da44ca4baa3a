/**
 * Hostile response bodies (issue 16) and a raw HTTP server that sends them with any encoding, for the bounded-input
 * tests. Bodies are generated as streams so a 1 GiB decompression bomb never exists in this process's memory.
 */
import { once } from "node:events";
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
 * gzip of `inflated` bytes of JSON whitespace followed by `null` (valid JSON if read in full). 1 GiB of spaces
 * compresses to ~1 MiB. Cached per size: built once per process, in 64 KiB slices.
 */
const bombs = new Map<number, Promise<Buffer>>();
export function gzipBomb(inflated: number): Promise<Buffer> {
  let bomb = bombs.get(inflated);
  if (!bomb) {
    bomb = (async () => {
      const gzip = zlib.createGzip({ level: 9 });
      const out: Buffer[] = [];
      gzip.on("data", (c: Buffer) => out.push(c));
      const slice = Buffer.alloc(64 * 1024, " ");
      for (let sent = 0; sent < inflated; sent += slice.length) {
        if (!gzip.write(slice)) await once(gzip, "drain");
      }
      gzip.end(Buffer.from("null"));
      await once(gzip, "end");
      return Buffer.concat(out);
    })();
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
