/**
 * The open orders of the guarded accounts, kept fresh over Hyperliquid's WebSocket (docs/operations.md, "The
 * orders known at death"): one connection to `<api>/ws`, one `openOrders` subscription per user
 * (`{"method":"subscribe","subscription":{"type":"openOrders","user":"0x…"}}`). The channel pushes the user's whole
 * list on every change (`{"channel":"openOrders","data":{"dex":"","user":"0x…","orders":[…]}}`, the entries as
 * `frontendOpenOrders` gives them, with `isTrigger`/`orderType`), so each message replaces the list; nothing is
 * patched. A list is fresh only while the socket is up and one message for its user has arrived since the last
 * (re)connect: a cancel on engine death may then name its orders without reading first.
 *
 * Bounded: at most 10 users (the exchange tracks at most 10 unique users per IP across user-specific
 * subscriptions), a message-size cap (the socket closes on a bigger frame), a cap on a list's length, a ping every
 * `pingIntervalMs` (the server closes a connection silent for 60 s) that also catches a dead connection (nothing
 * heard since the last ping: closed and reopened), and reconnects with a doubling back-off, all on the runtime's
 * timers. The socket comes from an injected factory; the daemon passes the `ws` package's client, loaded only when
 * the feed runs (loadWsClient). The wire is in docs/exchange-behaviour.md §29.
 */
import { z } from "zod";
import type { TimerHandle, Timers } from "../../core/runtime.js";
import type { FrontendOpenOrder } from "./schemas.js";

/** The exchange's limit: unique users across user-specific subscriptions, per IP (docs/exchange-behaviour.md §29). */
export const MAX_FEED_USERS = 10;

/** What the feed needs of a WebSocket client (the `ws` package's `WebSocket` has it). */
export type FeedSocket = {
  send(data: string): void;
  /** closes at once, without the closing handshake */
  terminate(): void;
  on(event: "open", listener: () => void): unknown;
  on(event: "message", listener: (data: unknown, isBinary: boolean) => void): unknown;
  on(event: "close", listener: () => void): unknown;
  on(event: "error", listener: (error: Error) => void): unknown;
};
export type FeedSocketFactory = (
  url: string,
  options: { maxPayload: number; handshakeTimeoutMs: number },
) => FeedSocket;

export type OrderFeedEvent =
  | { type: "connected"; url: string }
  | { type: "disconnected"; url: string; retryInMs: number; detail?: string }
  /** a list arrived; `first`: the first since the (re)connect, the list is fresh from now on */
  | { type: "snapshot"; user: string; orders: number; first: boolean }
  | { type: "refused"; detail: string }
  | { type: "invalid"; detail: string };

export type OrderFeedOptions = {
  /** the WebSocket URL (wsUrlOf the API base URL) */
  url: string;
  /** the users to follow (vault or account addresses); more than MAX_FEED_USERS is an error */
  users: readonly string[];
  timers: Timers;
  connect: FeedSocketFactory;
  onEvent?: ((event: OrderFeedEvent) => void) | undefined;
  pingIntervalMs?: number;
  reconnectInitialMs?: number;
  reconnectMaxMs?: number;
  maxMessageBytes?: number;
  maxOrders?: number;
  handshakeTimeoutMs?: number;
};

export const ORDER_FEED_DEFAULTS = Object.freeze({
  // half the server's 60 s idle close, so one lost ping does not lose the connection
  pingIntervalMs: 20_000,
  reconnectInitialMs: 500,
  reconnectMaxMs: 30_000,
  // 5,000 orders (the most open orders an address can hold) of ~400 bytes each, with room to spare
  maxMessageBytes: 4 * 1024 * 1024,
  maxOrders: 5_000,
  handshakeTimeoutMs: 10_000,
});

/** `http://h:p/x` → `ws://h:p/ws`, `https://…` → `wss://…/ws` (the exchange serves its WebSocket at /ws). */
export function wsUrlOf(apiUrl: string): string {
  const u = new URL(apiUrl);
  if (u.protocol !== "http:" && u.protocol !== "https:")
    throw new TypeError(`the API URL must be http(s) to derive its WebSocket URL, got ${u.protocol}`);
  u.protocol = u.protocol === "https:" ? "wss:" : "ws:";
  u.pathname = "/ws";
  u.search = "";
  u.hash = "";
  u.username = "";
  u.password = "";
  return u.toString();
}

/**
 * One order of the feed, checked for what the cancel path reads (its coin, id and kind) and bounded; the other
 * fields are dropped. Every change sends the whole list again, so its check must be cheap: this one costs about a
 * third of the full `frontendOpenOrders` schema's under --jitless (1.4 against 3.9 ms for 200 orders).
 */
const FeedOrder = z.object({
  coin: z.string().max(40),
  side: z.enum(["A", "B"]),
  limitPx: z.string().max(40),
  sz: z.string().max(40),
  oid: z.number().int().nonnegative(),
  timestamp: z.number().int().nonnegative(),
  isTrigger: z.boolean().optional(),
  reduceOnly: z.boolean().optional(),
  orderType: z.string().max(40).optional(),
  isPositionTpsl: z.boolean().optional(),
});

const OpenOrdersMessage = z.object({
  channel: z.literal("openOrders"),
  data: z.looseObject({
    user: z.string(),
    dex: z.string().optional(),
    orders: z.array(FeedOrder),
  }),
});

type UserList = { orders: FrontendOpenOrder[]; fresh: boolean };

export class OpenOrderFeed {
  readonly #o: Required<Omit<OrderFeedOptions, "onEvent">> & Pick<OrderFeedOptions, "onEvent">;
  readonly #lists = new Map<string, UserList>();
  #socket: FeedSocket | null = null;
  #up = false;
  #stopped = true;
  #attempt = 0;
  #heard = false;
  #ping: TimerHandle | null = null;
  #retry: TimerHandle | null = null;

  constructor(options: OrderFeedOptions) {
    const users = [...new Set(options.users.map((u) => u.toLowerCase()))];
    if (users.length > MAX_FEED_USERS)
      throw new RangeError(
        `the order feed follows at most ${MAX_FEED_USERS} users (the exchange's limit per IP), got ${users.length}`,
      );
    this.#o = { ...ORDER_FEED_DEFAULTS, ...options, users };
    for (const u of users) this.#lists.set(u, { orders: [], fresh: false });
  }

  /** The users followed (lower case). */
  get users(): string[] {
    return [...this.#lists.keys()];
  }

  /** True while the socket is open. */
  get connected(): boolean {
    return this.#up;
  }

  /**
   * The user's open orders when the list is fresh (socket up, a message since the last connect), else null: the
   * caller then reads them.
   */
  fresh(user: string): FrontendOpenOrder[] | null {
    const list = this.#lists.get(user.toLowerCase());
    return list && this.#up && list.fresh ? list.orders : null;
  }

  start(): void {
    if (!this.#stopped) return;
    this.#stopped = false;
    if (this.#lists.size > 0) this.#open();
  }

  stop(): void {
    this.#stopped = true;
    this.#retry?.cancel();
    this.#retry = null;
    this.#drop();
  }

  #open(): void {
    this.#retry = null;
    if (this.#stopped) return;
    let socket: FeedSocket;
    try {
      socket = this.#o.connect(this.#o.url, {
        maxPayload: this.#o.maxMessageBytes,
        handshakeTimeoutMs: this.#o.handshakeTimeoutMs,
      });
    } catch (error) {
      this.#lost(error instanceof Error ? error.message : String(error));
      return;
    }
    this.#socket = socket;
    socket.on("open", () => {
      if (this.#socket !== socket) return;
      this.#up = true;
      this.#attempt = 0;
      this.#o.onEvent?.({ type: "connected", url: this.#o.url });
      for (const user of this.#lists.keys())
        socket.send(JSON.stringify({ method: "subscribe", subscription: { type: "openOrders", user } }));
      this.#heard = true;
      this.#armPing(socket);
    });
    socket.on("message", (data, isBinary) => {
      if (this.#socket !== socket) return;
      this.#heard = true;
      if (!isBinary) this.#message(data);
    });
    let detail: string | undefined;
    socket.on("error", (error) => {
      detail = error.message;
    });
    socket.on("close", () => {
      if (this.#socket !== socket) return;
      this.#lost(detail);
    });
  }

  #message(data: unknown): void {
    const text = typeof data === "string" ? data : Buffer.isBuffer(data) ? data.toString("utf8") : null;
    if (text === null || text.length > this.#o.maxMessageBytes) return;
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      this.#o.onEvent?.({ type: "invalid", detail: "a message that is not JSON" });
      return;
    }
    const channel = (json as { channel?: unknown } | null)?.channel;
    if (channel === "error") {
      // e.g. "Cannot track more than 10 total users." (nktkas/hyperliquid#78): the list it refused stays unfresh
      const said = (json as { data?: unknown }).data;
      this.#o.onEvent?.({ type: "refused", detail: String(said).slice(0, 200) });
      return;
    }
    if (channel !== "openOrders") return; // subscriptionResponse, pong
    const parsed = OpenOrdersMessage.safeParse(json);
    const user = (json as { data?: { user?: unknown } }).data?.user;
    const list = typeof user === "string" ? this.#lists.get(user.toLowerCase()) : undefined;
    if (!list) return;
    if (
      !parsed.success ||
      parsed.data.data.orders.length > this.#o.maxOrders ||
      (parsed.data.data.dex ?? "") !== ""
    ) {
      // a list we cannot trust is no list: the cancel reads at death instead
      list.fresh = false;
      const detail = !parsed.success
        ? "an openOrders message of the wrong shape"
        : (parsed.data.data.dex ?? "") !== ""
          ? `an openOrders message for dex ${parsed.data.data.dex}`
          : `more than ${this.#o.maxOrders} open orders`;
      this.#o.onEvent?.({ type: "invalid", detail });
      return;
    }
    const first = !list.fresh;
    list.orders = parsed.data.data.orders;
    list.fresh = true;
    this.#o.onEvent?.({
      type: "snapshot",
      user: (user as string).toLowerCase(),
      orders: list.orders.length,
      first,
    });
  }

  #armPing(socket: FeedSocket): void {
    this.#ping = this.#o.timers.after(this.#o.pingIntervalMs, () => {
      if (this.#socket !== socket) return;
      // Nothing heard since the last ping (not even its pong): the connection is dead without a close.
      if (!this.#heard) {
        this.#lost("no answer to the last ping");
        return;
      }
      this.#heard = false;
      try {
        socket.send(JSON.stringify({ method: "ping" }));
      } catch {
        // a socket that cannot send reports its close
      }
      this.#armPing(socket);
    });
  }

  #drop(): void {
    this.#ping?.cancel();
    this.#ping = null;
    this.#up = false;
    for (const list of this.#lists.values()) list.fresh = false;
    const socket = this.#socket;
    this.#socket = null;
    if (socket) {
      try {
        socket.terminate();
      } catch {
        // already closed
      }
    }
  }

  #lost(detail: string | undefined): void {
    this.#drop();
    if (this.#stopped) return;
    const retryInMs = Math.min(this.#o.reconnectMaxMs, this.#o.reconnectInitialMs * 2 ** this.#attempt);
    this.#attempt = Math.min(this.#attempt + 1, 30);
    this.#o.onEvent?.({
      type: "disconnected",
      url: this.#o.url,
      retryInMs,
      ...(detail !== undefined ? { detail } : {}),
    });
    this.#retry = this.#o.timers.after(retryInMs, () => this.#open());
  }
}

/**
 * The `ws` package's client as a FeedSocketFactory, imported only when called: Node 20 has no WebSocket client
 * (and its experimental one dies under --jitless, like its fetch).
 */
export async function loadWsClient(): Promise<FeedSocketFactory> {
  const name = "ws";
  const mod = (await import(name)) as {
    WebSocket: new (
      url: string,
      options: { maxPayload: number; handshakeTimeout: number; perMessageDeflate: boolean },
    ) => FeedSocket;
  };
  return (url, { maxPayload, handshakeTimeoutMs }) =>
    new mod.WebSocket(url, { maxPayload, handshakeTimeout: handshakeTimeoutMs, perMessageDeflate: false });
}
