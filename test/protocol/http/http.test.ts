/**
 * The one HTTP transport (src/protocol/http/http.ts), against real HTTP on 127.0.0.1: it knows nothing of the
 * protocols above it, retries only idempotent calls and only when asked, never leaks its URL's secrets, and
 * throws only TransportError (mapped by each protocol layer; policy in src/core/errors/policy.ts).
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { describe, expect, test } from "vitest";
import { secretsOf } from "../../../src/core/redact.js";
import { TransportError } from "../../../src/protocol/http/errors.js";
import { createHttpTransport, joinUrl } from "../../../src/protocol/http/http.js";
import { shouldRetry } from "../../../src/protocol/policy.js";
import { startHostileServer } from "../../hostile/bodies.js";
import { freePort } from "../../reliability/harness.js";

const KEY = "a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d6";

async function caught(p: Promise<unknown>): Promise<TransportError> {
  try {
    await p;
  } catch (error) {
    expect(error).toBeInstanceOf(TransportError);
    return error as TransportError;
  }
  throw new Error("expected a rejection");
}

describe("createHttpTransport", () => {
  test("default: status, parsed body, Date header; statuses are returned, not thrown", async () => {
    const server = await startHostileServer(() => ({
      status: 418,
      headers: { date: "Mon, 23 Nov 2026 10:00:00 GMT" },
      body: '{"a":1}',
    }));
    const t = createHttpTransport({ baseUrl: server.url });
    try {
      const r = await t.postJson("/x", { q: 1 });
      expect(r.status).toBe(418);
      expect(r.json).toEqual({ a: 1 });
      expect(r.date).toBe(Date.parse("2026-11-23T10:00:00Z"));
      expect(r.attempts).toBe(1);
      expect(server.seen.map((s) => s.path)).toEqual(["/x"]);
    } finally {
      t.close();
      await server.close();
    }
  });

  test("behavior: an idempotent call is retried on 503 up to retryLimit; a non-idempotent one never is", async () => {
    const server = await startHostileServer(() => ({ status: 503, body: "null" }));
    const t = createHttpTransport({ baseUrl: server.url, retryLimit: 2, retryDelayMs: 1 });
    try {
      expect((await t.postJson("/info", {}, { idempotent: true })).attempts).toBe(3);
      expect(server.seen.length).toBe(3);
      expect((await t.postJson("/exchange", {})).attempts).toBe(1);
      expect(server.seen.length).toBe(4);
    } finally {
      t.close();
      await server.close();
    }
  });

  test("behavior: a dropped connection is a retryable transport error; retried only when idempotent", async () => {
    const server = await startHostileServer(() => {
      throw new Error("drop");
    });
    const t = createHttpTransport({ baseUrl: server.url, retryLimit: 1, retryDelayMs: 1 });
    try {
      const e = await caught(t.postJson("/exchange", {}));
      expect(e.kind).toBe("transport");
      expect(shouldRetry(e)).toBe(true);
      expect(server.seen.length).toBe(1);
      await caught(t.postJson("/info", {}, { idempotent: true }));
      expect(server.seen.length).toBe(3);
    } finally {
      t.close();
      await server.close();
    }
  });

  test("behavior: an aborted call is transport, aborted, never retried", async () => {
    const server = await startHostileServer(() => new Promise(() => {}));
    const t = createHttpTransport({ baseUrl: server.url, retryLimit: 3, retryDelayMs: 1 });
    const controller = new AbortController();
    try {
      const pending = caught(t.postJson("/info", {}, { idempotent: true, signal: controller.signal }));
      setTimeout(() => controller.abort(), 50);
      const e = await pending;
      expect(e.aborted).toBe(true);
      expect(shouldRetry(e)).toBe(false);
      expect(server.seen.length).toBe(1);
    } finally {
      t.close();
      await server.close();
    }
  });

  test("error: a body over the bounds is malformed_response, before JSON.parse", async () => {
    const server = await startHostileServer(() => ({ body: `[${"[".repeat(100)}${"]".repeat(100)}]` }));
    const t = createHttpTransport({ baseUrl: server.url });
    try {
      const e = await caught(t.postJson("/info", {}, { limits: { maxDepth: 64 } }));
      expect(e.kind).toBe("malformed_response");
      expect(e.limit).toBe("depth");
    } finally {
      t.close();
      await server.close();
    }
  });

  test("behavior: no error carries the key of a URL that holds one", async () => {
    const port = await freePort();
    const t = createHttpTransport({ baseUrl: `http://127.0.0.1:${port}/${KEY}/evm` });
    try {
      const e = await caught(t.postJson(undefined, {}));
      expect(e.code).toBe("ECONNREFUSED");
      for (const text of [e.message, e.url, e.reason, JSON.stringify(e), String(e.cause ?? "")])
        expect(text).not.toContain(KEY);
      expect(t.shownUrl).not.toContain(KEY);
      expect(t.scrub(`got ${KEY} back`)).toBe("got *** back");
      t.close();
      const closed = await caught(t.postJson(undefined, {}));
      expect(closed.message).toMatch(/closed/);
      expect(closed.message).not.toContain(KEY);
    } finally {
      t.close();
    }
  });

  test("pure: joinUrl and secretsOf", () => {
    expect(joinUrl("http://h/", "/info")).toBe("http://h/info");
    expect(joinUrl("http://h/k/evm", undefined)).toBe("http://h/k/evm");
    expect(secretsOf(`https://user:password1@h/${KEY}/evm?key=abcdef`)).toEqual(
      expect.arrayContaining([KEY, "password1", "key=abcdef"]),
    );
    // A malformed escape the URL parser accepts: kept as written, never a URIError (the transport's
    // constructor calls secretsOf, so a throw here stopped the CLI with "URI malformed").
    expect(secretsOf("https://user%E0:pass%E0word@h/x")).toEqual(
      expect.arrayContaining(["user%E0", "pass%E0word"]),
    );
    expect(() =>
      createHttpTransport({ baseUrl: "https://user%E0:pass%E0word@127.0.0.1:9/" }).close(),
    ).not.toThrow();
  });
});

describe("createHttpTransport: a URL's user:pass", () => {
  test("behavior: sent as Basic authentication (percent-decoded), never in the request line nor a shown URL", async () => {
    const seen: { auth: string | undefined; url: string | undefined }[] = [];
    const server = createServer((req, res) => {
      seen.push({ auth: req.headers.authorization, url: req.url });
      res.writeHead(204).end();
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const { port } = server.address() as AddressInfo;
    const t = createHttpTransport({ baseUrl: `http://al%40ice:p%3Ass@127.0.0.1:${port}/hook` });
    try {
      const r = await t.request(undefined, { method: "POST", body: "{}", parseJson: false });
      expect(r.status).toBe(204);
      expect(seen).toEqual([
        { auth: `Basic ${Buffer.from("al@ice:p:ss").toString("base64")}`, url: "/hook" },
      ]);
      expect(t.shownUrl).not.toMatch(/al%40ice|p%3Ass/);
    } finally {
      t.close();
      await new Promise((r) => server.close(r));
    }
  });
});
