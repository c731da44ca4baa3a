/**
 * startSimulator(): the whole service on loopback, over node:http — POST /exchange, POST /info,
 * POST /evm and /<key>/evm (JSON-RPC, the chain of src/sim/chain.ts), the WebSocket at /ws (src/sim/ws.ts), and
 * the loopback-only /admin route.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { type Clock, ManualClock, systemClock } from "../core/clock.js";
import { BaseError } from "../core/errors/base.js";
import { SIMULATOR_INFO_TYPE, SIMULATOR_NAME } from "../protocol/hyperliquid/simulator-id.js";
import { handleAdmin, isLoopback } from "./admin.js";
import { SimChain, type SimChainOptions } from "./chain.js";
import { type DemoAccount, DemoMarket, demoAccount, demoUser } from "./demo.js";
import { type HandlerResult, handleExchange } from "./exchange.js";
import { EXPLORER_WEIGHT, handleExplorer } from "./explorer.js";
import { FaultController, type Faults, tooManyRequests } from "./faults.js";
import { handleInfo, infoWeight } from "./info.js";
import type { SimEndpoint, SimOrderInput, SimPositionInput, SimTrigger, SimUserInput } from "./records.js";
import { createRpcHandler, type RpcHandlerResult } from "./rpc.js";
import { type SimState, SimStore } from "./state.js";
import { attachWebSocket, type SimWebSocket } from "./ws.js";

export type { DemoAccount } from "./demo.js";
export type { FaultSpec, Faults } from "./faults.js";
export type {
  ReceivedAction,
  SimOrder,
  SimOrderInput,
  SimPosition,
  SimPositionInput,
  SimTrigger,
} from "./records.js";
export type { SimState } from "./state.js";
export type { SimWebSocket } from "./ws.js";

export type SimulatorUser = {
  address: string;
  /** Cumulative traded volume; default 2,000,000 (above the $1M gate). */
  volumeUsd?: number;
  /** Per-user volume gate switch (default: the simulator's `volumeGate`). */
  volumeGate?: boolean;
  agents?: string[];
  vaults?: string[];
  orders?: SimOrderInput[];
  positions?: SimPositionInput[];
  /** USDC collateral; default 10,000. */
  balanceUsd?: number;
  /** Address-based request budget (requests allowed); unlimited when absent. */
  addressBudget?: number;
};

export type SimulatorOptions = {
  host?: string;
  port?: number;
  clock?: Clock;
  seed?: number;
  network?: "mainnet" | "testnet";
  users?: SimulatorUser[];
  demo?: boolean;
  successType?: "scheduleCancel" | "default";
  volumeGate?: boolean;
  volumeGateOnRemove?: boolean;
  dailyTriggerLimit?: number;
  dailyLimitMessage?: string;
  countEmptyTriggers?: boolean;
  /** Per-IP weight per minute of the simulator clock; null or Infinity turns the limiter off. */
  ipWeightPerMinute?: number | null;
  pageOrder?: "fromStart" | "fromEnd";
  sizeZero?: "error" | "empty";
  chain?: Partial<SimChainOptions>;
  /** Called after every trigger (e.g. to log it). */
  onTrigger?: (user: string, trigger: SimTrigger) => void;
  /** The newest transactions the explorer lists per address (default 2000). */
  explorerTxLimit?: number;
  /**
   * Injected round-trip time (ms) on every API answer (not /admin): half before the request is handled, half
   * before the answer leaves, so "one round trip" costs something on loopback (benchmarks; default 0).
   */
  rttMs?: number;
  /**
   * Hears each /exchange and /info request as the simulator receives it (body read) and as its answer leaves, in
   * order (tests that check what reached the exchange before what).
   */
  onRequest?: (event: SimRequestEvent) => void;
  /**
   * Sign the chain's big block in the background (SimChain.warmBigBlock) once the JSON-RPC endpoint is first asked
   * anything (`hl-deadman sim`): a rehearsal that reads the chain does not stall the exchange endpoint for seconds on
   * its first `evm txs`, and a simulator whose chain nobody reads never spends those seconds of CPU.
   */
  warmBigBlockOnRpc?: boolean;
};

export type SimRequestEvent = {
  endpoint: "exchange" | "info";
  /** the info request's `type`, or the exchange action's */
  type: string | undefined;
  phase: "received" | "answered";
};

export type SimulatorHandle = {
  apiUrl: string;
  /** `<apiUrl>/explorer`: the explorer API on its own path, as on the real host */
  explorerUrl: string;
  rpcUrl: string;
  adminUrl: string;
  clock: Clock;
  faults: Faults;
  state: SimState;
  chain: SimChain;
  demo?: DemoAccount;
  /** the WebSocket at `<apiUrl>/ws` (wsUrl): `openOrders` subscriptions and `ping` */
  ws: SimWebSocket;
  wsUrl: string;
  addUser(u: SimulatorUser): void;
  close(): Promise<void>;
};

type RpcHandler = (rawBody: string) => RpcHandlerResult;

export const SIMULATOR_DEFAULTS = Object.freeze({
  host: "127.0.0.1",
  port: 0,
  seed: 1,
  network: "mainnet" as const,
  successType: "scheduleCancel" as const,
  volumeGate: true,
  volumeGateOnRemove: true,
  dailyTriggerLimit: 10,
  dailyLimitMessage: "Too many scheduled cancel triggers today",
  countEmptyTriggers: true,
  ipWeightPerMinute: 1200,
  rttMs: 0,
  maxBodyBytes: 1024 * 1024,
});

export class SimulatorError extends BaseError {
  override name = "SimulatorError";
}

const MAX_TIMER_MS = 2_147_483_647;

/** Starts the simulator; resolves once it listens. */
export async function startSimulator(options: SimulatorOptions = {}): Promise<SimulatorHandle> {
  const o = { ...SIMULATOR_DEFAULTS, ...stripUndefined(options) };
  const clock = options.clock ?? systemClock;
  if (!Number.isInteger(o.dailyTriggerLimit) || o.dailyTriggerLimit < 0) {
    throw new SimulatorError(`dailyTriggerLimit must be an integer >= 0, got ${o.dailyTriggerLimit}.`);
  }
  if (!Number.isFinite(o.rttMs) || o.rttMs < 0 || o.rttMs > 60_000) {
    throw new SimulatorError(`rttMs must be a number of milliseconds in 0..60000, got ${o.rttMs}.`);
  }
  const rttIn = Math.floor(o.rttMs / 2);
  const rttOut = o.rttMs - rttIn;
  const weightLimit =
    o.ipWeightPerMinute === null || !Number.isFinite(o.ipWeightPerMinute) ? null : o.ipWeightPerMinute;

  const store = new SimStore({
    clock,
    dailyTriggerLimit: o.dailyTriggerLimit,
    countEmptyTriggers: o.countEmptyTriggers,
    ...(options.explorerTxLimit !== undefined ? { explorerTxLimit: options.explorerTxLimit } : {}),
    // the `fireMissesBuilderDexes` fault: a fired schedule leaves the builder-deployed dexes' orders
    fireReachesBuilderDexes: () => faults.get("exchange").fireMissesBuilderDexes !== true,
  });
  if (options.onTrigger) store.onTrigger = options.onTrigger;
  const faults = new FaultController(o.seed, () => clock.now());
  const rules = {
    isMainnet: o.network === "mainnet",
    successType: o.successType,
    volumeGate: o.volumeGate,
    volumeGateOnRemove: o.volumeGateOnRemove,
    dailyTriggerLimit: o.dailyTriggerLimit,
    dailyLimitMessage: o.dailyLimitMessage,
  };
  const addUser = (u: SimulatorUser) => {
    store.addUser(u as SimUserInput);
  };
  for (const u of options.users ?? []) addUser(u);

  let demo: DemoAccount | undefined;
  let market: DemoMarket | undefined;
  if (o.demo) {
    demo = demoAccount(o.seed);
    market = new DemoMarket(store, o.seed);
    store.addUser(demoUser(demo.address));
  }

  const { chain, rpc } = mountChain(clock, o);
  let warming = false;

  // Triggers: a ManualClock drives them synchronously; the real clock gets one timer for the earliest schedule.
  let timer: NodeJS.Timeout | undefined;
  let closed = false;
  const unsubscribers: Array<() => void> = [];
  const armTimer = () => {
    if (timer) clearTimeout(timer);
    timer = undefined;
    if (closed || clock instanceof ManualClock) return;
    const due = store.nextDue();
    if (due === null) return;
    // After the fire, aim at the next schedule, also when nothing fired: node measures the timeout on its own
    // millisecond clock, so it can wake a fraction of a millisecond before `due` by this clock, and a schedule
    // left without a timer would never fire (the signals test's SIGKILL row waited for it in vain).
    timer = setTimeout(
      () => {
        store.tick();
        armTimer();
      },
      Math.min(MAX_TIMER_MS, Math.max(0, due - clock.now())),
    );
    timer.unref();
  };
  store.onScheduleChange = armTimer;
  if (clock instanceof ManualClock) {
    unsubscribers.push(
      clock.onChange(() => {
        market?.walk();
        store.tick();
      }),
    );
  }
  let walkTimer: NodeJS.Timeout | undefined;
  if (market && !(clock instanceof ManualClock)) {
    walkTimer = setInterval(() => market?.walk(), 1000);
    walkTimer.unref();
  }

  // Per-IP weight budget per minute of the simulator clock (fixed windows; docs/exchange-behaviour.md §10: 1200/min).
  const weights = new Map<string, { window: number; used: number }>();
  const spend = (ip: string, weight: number): boolean => {
    if (weightLimit === null) return true;
    const window = Math.floor(clock.now() / 60_000);
    const entry = weights.get(ip);
    const used = entry && entry.window === window ? entry.used : 0;
    if (used + weight > weightLimit) return false;
    weights.set(ip, { window, used: used + weight });
    return true;
  };

  const sockets = new Set<Socket>();
  const pending = new Set<NodeJS.Timeout>();
  const delay = (ms: number) =>
    new Promise<void>((resolve) => {
      const t = setTimeout(() => {
        pending.delete(t);
        resolve();
      }, ms);
      pending.add(t);
    });

  // The second half of the injected round trip, before any API answer leaves.
  const reply = async (res: ServerResponse, r: Parameters<typeof send>[1]): Promise<void> => {
    if (rttOut > 0) await delay(rttOut);
    if (closed || res.destroyed) return;
    send(res, r);
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const path = (req.url ?? "/").split("?")[0] ?? "/";
    // The Date header is the simulator's clock (as the exchange's is its own), not the host's; an endpoint's Date
    // fault (a wrong proxy in front of it) changes only the header.
    res.setHeader("Date", faults.dateHeader(routeOf(path), clock.now()));
    const method = req.method ?? "GET";
    if (path === "/admin" || path.startsWith("/admin/")) {
      if (!isLoopback(req.socket.remoteAddress)) return send(res, text(403, "Forbidden"));
      const body = await readBody(req, o.maxBodyBytes);
      if (body === null) return send(res, text(413, "Payload Too Large"));
      return send(res, handleAdmin({ store, faults, addUser }, method, path, body));
    }
    const endpoint = routeOf(path);
    if (!endpoint) return send(res, text(404, "Not Found"));
    if (rttIn > 0) await delay(rttIn);
    if (closed) return;
    store.countRequest(endpoint);
    // A fault limited to some request types needs the body's type before it can decide.
    let early: string | null | undefined;
    let requestType: string | undefined;
    if (faults.needsType(endpoint) && method === "POST") {
      early = await readBody(req, o.maxBodyBytes);
      requestType = typeOf(endpoint, early);
    }
    const decision = faults.decide(endpoint, requestType);
    if (decision.kind === "blackhole") return; // accepted, never answered; close() destroys the socket
    if (decision.latencyMs > 0) await delay(decision.latencyMs);
    if (closed) return;
    if (decision.kind === "reset") {
      req.socket.destroy();
      return;
    }
    if (decision.kind === "status") return reply(res, decision);
    if (method !== "POST") return reply(res, text(405, "Method Not Allowed"));
    const body = early !== undefined ? early : await readBody(req, o.maxBodyBytes);
    if (body === null) return reply(res, text(413, "Payload Too Large"));
    const ip = req.socket.remoteAddress ?? "unknown";
    if (endpoint === "evm") {
      if (o.warmBigBlockOnRpc && !warming) {
        warming = true;
        void chain.warmBigBlock();
      }
      const out = rpc(body);
      if (out.body === undefined) {
        res.writeHead(out.status === 200 ? 204 : out.status).end();
        return;
      }
      return reply(res, { status: out.status, contentType: "application/json", body: out.body });
    }
    // Axum's Json extractor refuses an explicit non-JSON content type with 415 (a missing one is tolerated
    // here, so hand-written curl calls work).
    const type = req.headers["content-type"];
    if (type !== undefined && !/application\/json/i.test(type)) {
      return reply(res, text(415, "Expected request with `Content-Type: application/json`"));
    }
    const heard =
      options.onRequest && (endpoint === "exchange" || endpoint === "info")
        ? { endpoint, type: typeOf(endpoint, body) }
        : null;
    if (heard) options.onRequest?.({ ...heard, phase: "received" });
    // fault `dropAnswer`: the handler runs (the action is applied), the answer never leaves
    const answer = async (r: Parameters<typeof send>[1]) => {
      if (decision.kind === "drop") {
        req.socket.destroy();
        return;
      }
      await reply(res, r);
      if (heard) options.onRequest?.({ ...heard, phase: "answered" });
    };
    if (endpoint === "exchange") {
      if (!spend(ip, 1)) return reply(res, tooManyRequests());
      const postOnlyWindow = faults.get("exchange").postOnlyWindow === true;
      return answer(handleExchange(store, { ...rules, postOnlyWindow }, body));
    }
    if (endpoint === "explorer") {
      if (!spend(ip, EXPLORER_WEIGHT)) return reply(res, tooManyRequests());
      return answer(handleExplorer(store, body, faults.get("explorer")));
    }
    let weight = 2;
    let infoType: unknown;
    try {
      const parsed = JSON.parse(body) as unknown;
      infoType = (parsed as { type?: unknown } | null)?.type;
      weight = infoWeight(parsed);
    } catch {
      weight = 2;
    }
    if (!spend(ip, weight)) return reply(res, tooManyRequests());
    // The one answer only the simulator gives: how `doctor` tells it from the exchange (simulator-id.ts).
    if (infoType === SIMULATOR_INFO_TYPE)
      return answer({
        status: 200,
        contentType: "application/json",
        body: JSON.stringify({ simulator: SIMULATOR_NAME, seed: o.seed }),
      });
    return answer(handleInfo(store, body));
  };

  const server = createServer({ keepAlive: true }, (req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent && !res.destroyed) {
        send(res, text(500, error instanceof Error ? error.message : String(error)));
      }
    });
  });
  // Keep idle connections open well beyond any push interval, as the load balancers in front of real APIs do
  // (typically 60 s or more). Node's default of 5 s races a client that reuses a socket every 5 s and turns
  // into spurious ECONNRESETs on the heartbeat.
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
  });
  // The WebSocket's pushes wait half the injected round trip, as an answer's second half does.
  const ws = await attachWebSocket(server, store, { oneWayMs: rttOut, isClosed: () => closed });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(o.port, o.host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const hostForUrl = address.family === "IPv6" ? `[${address.address}]` : address.address;
  const apiUrl = `http://${hostForUrl}:${address.port}`;

  let closing: Promise<void> | undefined;
  const close = () => {
    closing ??= (async () => {
      closed = true;
      if (timer) clearTimeout(timer);
      if (walkTimer) clearInterval(walkTimer);
      for (const t of pending) clearTimeout(t);
      pending.clear();
      for (const u of unsubscribers) u();
      ws.close();
      const done = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const s of sockets) s.destroy();
      server.closeAllConnections();
      await done;
    })();
    return closing;
  };

  return {
    apiUrl,
    explorerUrl: `${apiUrl}/explorer`,
    rpcUrl: `${apiUrl}/evm`,
    adminUrl: `${apiUrl}/admin`,
    clock,
    faults,
    state: store,
    chain,
    ...(demo ? { demo } : {}),
    ws,
    wsUrl: `${apiUrl.replace(/^http/, "ws")}/ws`,
    addUser,
    close,
  };
}

/** The request's type for type-limited faults: the body's `type`, or the exchange action's `type`. */
function typeOf(endpoint: SimEndpoint, body: string | null): string | undefined {
  if (body === null) return undefined;
  try {
    const j = JSON.parse(body) as { type?: unknown; action?: { type?: unknown } };
    const t = endpoint === "exchange" ? j.action?.type : j.type;
    return typeof t === "string" ? t : undefined;
  } catch {
    return undefined;
  }
}

function routeOf(path: string): SimEndpoint | null {
  if (path === "/exchange") return "exchange";
  if (path === "/explorer") return "explorer";
  if (path === "/info") return "info";
  if (path === "/evm" || /^\/[^/]+\/evm$/.test(path)) return "evm";
  return null;
}

function text(status: number, body: string): HandlerResult {
  return { status, contentType: "text/plain; charset=utf-8", body };
}

function send(res: ServerResponse, r: { status: number; contentType: string; body: string }): void {
  if (res.destroyed) return;
  res.writeHead(r.status, {
    "Content-Type": r.contentType,
    "Content-Length": Buffer.byteLength(r.body),
  });
  res.end(r.body);
}

function readBody(req: IncomingMessage, limit: number): Promise<string | null> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let tooBig = false;
    req.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) tooBig = true;
      else chunks.push(chunk);
    });
    req.on("end", () => resolve(tooBig ? null : Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}

function stripUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}

/** Mounts the HyperEVM chain of src/sim/chain.ts and its JSON-RPC handler of src/sim/rpc.ts. */
function mountChain(
  clock: Clock,
  o: {
    seed: number;
    pageOrder?: "fromStart" | "fromEnd";
    sizeZero?: "error" | "empty";
    chain?: Partial<SimChainOptions>;
  },
): { chain: SimChain; rpc: RpcHandler } {
  const chain = new SimChain({
    ...(o.chain ?? {}),
    clock,
    seed: o.chain?.seed ?? o.seed,
    ...(o.pageOrder ? { pageOrder: o.pageOrder } : {}),
    ...(o.sizeZero ? { sizeZero: o.sizeZero } : {}),
  });
  return { chain, rpc: createRpcHandler(chain) };
}
