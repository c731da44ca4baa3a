import http from "node:http";
import type { AddressInfo } from "node:net";

/** A tiny JSON-RPC server on 127.0.0.1:0 whose answers a test decides (for node behaviours the simulator lacks). */
export async function startFakeRpc(
  answer: (body: string) => { status?: number; body: string } | Promise<{ status?: number; body: string }>,
): Promise<{ url: string; close(): Promise<void> }> {
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", async () => {
      const out = await answer(Buffer.concat(chunks).toString("utf8"));
      res.writeHead(out.status ?? 200, { "content-type": "application/json" });
      res.end(out.body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/evm`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Answers every call with -32601, as a node without the ots_ namespace does (eth_blockNumber still works). */
export function noOtsAnswer(body: string): { body: string } {
  const req = JSON.parse(body) as { id: number; method: string };
  if (req.method === "eth_blockNumber")
    return { body: JSON.stringify({ jsonrpc: "2.0", id: req.id, result: "0x10" }) };
  return {
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: req.id,
      error: { code: -32601, message: "Method not found" },
    }),
  };
}
