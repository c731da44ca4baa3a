/**
 * A TCP proxy on 127.0.0.1 for partitions (node:net): forwards each connection to `targetPort` until `partition()`,
 * which destroys the connections open and from then on accepts new ones but forwards nothing (a black hole, as a
 * dropped network looks to the client: no answer, no reset); `heal()` forwards again.
 */
import { createConnection, createServer, type Socket } from "node:net";

export type TcpProxy = {
  port: number;
  partition(): void;
  heal(): void;
  close(): Promise<void>;
};

export async function startTcpProxy(targetPort: number): Promise<TcpProxy> {
  const open = new Set<Socket>();
  let cut = false;
  const server = createServer((inbound) => {
    open.add(inbound);
    inbound.on("close", () => open.delete(inbound));
    inbound.on("error", () => undefined);
    if (cut) return; // held: nothing forwarded, nothing answered
    const outbound = createConnection({ host: "127.0.0.1", port: targetPort });
    open.add(outbound);
    outbound.on("close", () => {
      open.delete(outbound);
      inbound.destroy();
    });
    outbound.on("error", () => inbound.destroy());
    inbound.on("close", () => outbound.destroy());
    inbound.pipe(outbound);
    outbound.pipe(inbound);
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : 0;
  return {
    port,
    partition() {
      cut = true;
      for (const s of open) s.destroy();
    },
    heal() {
      cut = false;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of open) s.destroy();
        server.close(() => resolve());
      }),
  };
}
