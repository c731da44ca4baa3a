/**
 * The simulator's WebSocket at /ws on its HTTP port (the exchange's layout): `{"method":"subscribe","subscription":
 * {"type":"openOrders","user":"0x…"}}` answers `subscriptionResponse`, then the user's whole list at once and again
 * on every change (`{"channel":"openOrders","data":{"dex":"","user":"0x…","orders":[…]}}`, entries as
 * `frontendOpenOrders` gives them); `{"method":"ping"}` answers `{"channel":"pong"}`; `unsubscribe` stops a feed.
 * At most 10 unique users per IP across its connections, as on the exchange: an 11th is refused with
 * `{"channel":"error","data":"Cannot track more than 10 total users."}` (the exchange's text, nktkas/hyperliquid#78).
 * Every pushed message waits `oneWayMs` (half the injected round trip) before it leaves.
 */
import type { IncomingMessage, Server } from "node:http";
import type { Duplex } from "node:stream";
import { frontendOrderJson, ordersOf } from "./info.js";
import type { SimStore } from "./state.js";

/** The exchange's limit of unique users across user-specific subscriptions, per IP. */
export const WS_MAX_USERS_PER_IP = 10;
export const WS_TOO_MANY_USERS = "Cannot track more than 10 total users.";
const MAX_INBOUND_BYTES = 64 * 1024;

type WsClient = {
  readyState: number;
  send(data: string): void;
  terminate(): void;
  on(event: "message", listener: (data: Buffer, isBinary: boolean) => void): unknown;
  on(event: "close", listener: () => void): unknown;
  on(event: "error", listener: (error: Error) => void): unknown;
};
type WsServer = {
  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer, done: (ws: WsClient) => void): void;
  close(): void;
};

export type SimWebSocket = {
  /** the users each open connection follows (tests) */
  subscriptions(): string[][];
  /** closes every WebSocket connection at once, as a dropped network would (tests, the reconnect path) */
  drop(): number;
  close(): void;
};

/** Serves /ws on `server` through the `ws` package (loaded here, so the simulator's HTTP needs nothing more). */
export async function attachWebSocket(
  server: Server,
  store: SimStore,
  { oneWayMs, isClosed }: { oneWayMs: number; isClosed: () => boolean },
): Promise<SimWebSocket> {
  const name = "ws";
  const mod = (await import(name)) as {
    WebSocketServer: new (options: {
      noServer: true;
      maxPayload: number;
      perMessageDeflate: boolean;
    }) => WsServer;
  };
  const wss = new mod.WebSocketServer({
    noServer: true,
    maxPayload: MAX_INBOUND_BYTES,
    perMessageDeflate: false,
  });
  const clients = new Map<WsClient, { ip: string; users: Set<string> }>();
  const pending = new Set<NodeJS.Timeout>();

  const push = (ws: WsClient, message: unknown) => {
    const text = JSON.stringify(message);
    const out = () => {
      if (ws.readyState === 1) ws.send(text);
    };
    if (oneWayMs <= 0) return out();
    const t = setTimeout(() => {
      pending.delete(t);
      out();
    }, oneWayMs);
    pending.add(t);
  };
  const listOf = (user: string) => ({
    channel: "openOrders",
    data: { dex: "", user, orders: ordersOf(store.account(user), "").map(frontendOrderJson) },
  });
  const usersOfIp = (ip: string) => {
    const users = new Set<string>();
    for (const c of clients.values()) if (c.ip === ip) for (const u of c.users) users.add(u);
    return users;
  };

  // Changes within one handler (a cancel of many orders) go out as one list, as the exchange sends one per block.
  const dirty = new Set<string>();
  store.onOrdersChange = (user) => {
    if (dirty.size === 0)
      queueMicrotask(() => {
        const users = [...dirty];
        dirty.clear();
        for (const [ws, c] of clients) for (const u of users) if (c.users.has(u)) push(ws, listOf(u));
      });
    dirty.add(user);
  };

  const onMessage = (ws: WsClient, c: { ip: string; users: Set<string> }, raw: string) => {
    let msg: { method?: unknown; subscription?: { type?: unknown; user?: unknown } };
    try {
      msg = JSON.parse(raw);
    } catch {
      return push(ws, {
        channel: "error",
        data: `Error parsing JSON into valid websocket request: ${raw.slice(0, 100)}`,
      });
    }
    if (msg?.method === "ping") return push(ws, { channel: "pong" });
    const sub = msg?.subscription;
    const method = msg?.method;
    if ((method !== "subscribe" && method !== "unsubscribe") || typeof sub !== "object" || sub === null)
      return push(ws, {
        channel: "error",
        data: `Error parsing JSON into valid websocket request: ${raw.slice(0, 100)}`,
      });
    if (sub.type !== "openOrders" || typeof sub.user !== "string" || !/^0x[0-9a-fA-F]{40}$/.test(sub.user))
      return push(ws, {
        channel: "error",
        data: `Invalid subscription ${JSON.stringify(sub).slice(0, 200)}`,
      });
    const user = sub.user.toLowerCase();
    if (method === "unsubscribe") {
      c.users.delete(user);
      return push(ws, { channel: "subscriptionResponse", data: { method, subscription: sub } });
    }
    if (!usersOfIp(c.ip).has(user) && usersOfIp(c.ip).size >= WS_MAX_USERS_PER_IP)
      return push(ws, { channel: "error", data: WS_TOO_MANY_USERS });
    c.users.add(user);
    push(ws, { channel: "subscriptionResponse", data: { method, subscription: { ...sub, dex: "" } } });
    push(ws, listOf(user));
  };

  server.on("upgrade", (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    const path = (req.url ?? "/").split("?")[0];
    if (path !== "/ws" || isClosed()) {
      socket.end("HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => {
      const c = { ip: req.socket.remoteAddress ?? "unknown", users: new Set<string>() };
      clients.set(ws, c);
      ws.on("message", (data, isBinary) => {
        if (!isBinary) onMessage(ws, c, data.toString("utf8"));
      });
      ws.on("close", () => clients.delete(ws));
      ws.on("error", () => clients.delete(ws));
    });
  });

  const drop = () => {
    const n = clients.size;
    for (const ws of clients.keys()) ws.terminate();
    clients.clear();
    return n;
  };
  return {
    subscriptions: () => [...clients.values()].map((c) => [...c.users]),
    drop,
    close() {
      for (const t of pending) clearTimeout(t);
      pending.clear();
      drop();
      wss.close();
    },
  };
}
