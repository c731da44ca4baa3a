/**
 * `hl-deadman/engine`: the trading engine's side of the connection guard (docs/operations.md, "Cancel on
 * disconnect"), for engines written in TypeScript or JavaScript. Dependency-free on purpose (node:net only, and the
 * protocol's pure module and the runtime's timers): importing it into an engine loads neither ethers nor got nor pino.
 *
 *   import { holdSwitch } from "hl-deadman/engine";
 *   const hold = holdSwitch({ socket: "/run/hl-deadman/guard.sock", accounts: ["0xabc..."] });
 *   // ... trade; on a planned restart: await hold.detach(30_000); on a clean stop that should cancel: hold.close()
 *   // whenever the account's resting orders change (protocol version 2):
 *   hold.announceOrders("0xabc...", [{ oid: 123, asset: 0, trigger: false, reduceOnly: false }]);
 *
 * It connects, names the accounts, writes a heartbeat line every `heartbeatMs`, and reconnects whenever the
 * connection is lost, e.g. while the daemon restarts (after `reconnectMs`, doubling to `maxReconnectMs` while the
 * daemon is away): the daemon starts with every account `waiting`, so a reconnect within its start cancels nothing. The process's death closes the connection,
 * which is the point: the daemon sees it at once.
 */
import { connect, type Socket } from "node:net";
import {
  type AnnouncedOrder,
  type GuardNotice,
  type GuardVersion,
  guardHelloLine,
  guardOrdersLines,
  parseGuardNotice,
} from "../core/guard-protocol.js";
import { systemTimers, type TimerHandle, type Timers } from "../core/runtime.js";

export {
  type AnnouncedOrder,
  GUARD_MAX_ORDERS,
  GUARD_PROTOCOL,
  type GuardNotice,
  guardHelloLine,
  guardOrdersLines,
  parseGuardNotice,
} from "../core/guard-protocol.js";

export type HoldSwitchOptions = {
  /** the daemon's `--guard-socket`: a Unix socket path, or `127.0.0.1:PORT` / `[::1]:PORT` */
  socket: string;
  /** the accounts this engine trades (0x addresses) */
  accounts: readonly string[];
  /** a heartbeat line this often (ms); keep it well under the daemon's `--guard-heartbeat-gap`. Default 1000. */
  heartbeatMs?: number;
  /** wait this long before reconnecting a lost connection (ms), doubling after each failed try. Default 200. */
  reconnectMs?: number;
  /** the longest wait between reconnects (ms). Default 5000. */
  maxReconnectMs?: number;
  /** hears each change: `connected` (the daemon answered ok), `refused` (with its reason), `disconnected` */
  onState?: (state: "connected" | "refused" | "disconnected", detail?: string) => void;
  /**
   * Hears what the daemon tells the engine (protocol version 2): `halted` (the account is latched HALTED, its
   * positions may be being closed: stop trading it until `resumed`), `resumed` (the operator's reset), `drill` (a
   * drill's fire will cancel whatever rests on the account until `until`, epoch ms).
   */
  onNotice?: (notice: GuardNotice) => void;
  /** the protocol version to speak first (default 2; a daemon that speaks only 1 makes it fall back to 1) */
  version?: GuardVersion;
  /** the timers the heartbeats and reconnects wait on (default: node's) */
  timers?: Timers;
};

export type SwitchHold = {
  /** whether the daemon accepted the connection and it is open */
  readonly connected: boolean;
  /** Announces a planned restart (`detach <ms>`) and closes: no engine down if a new engine connects within `ms`. */
  detach(ms: number): Promise<void>;
  /** Closes for good: the daemon sees the engine down for these accounts (its policy follows). */
  close(): Promise<void>;
  /**
   * Announces `account`'s resting orders (protocol version 2; the whole set each time, an empty list when none
   * rests): on the engine's death the daemon cancels them at once, without reading first, keeps the reduce-only
   * triggers (stops) unless told otherwise, and reads to confirm. Kept and sent again after a reconnect. Returns
   * whether it was written now (false while not connected, or to a daemon that speaks only version 1). Throws for
   * an account this hold did not name, or past GUARD_MAX_ORDERS.
   */
  announceOrders(account: string, orders: readonly AnnouncedOrder[]): boolean;
};

function target(socket: string): { path: string } | { host: string; port: number } {
  const m = /^\[?([0-9a-fA-F:.]+?)\]?:(\d+)$/.exec(socket);
  return m && !socket.includes("/") ? { host: m[1] as string, port: Number(m[2]) } : { path: socket };
}

export function holdSwitch(options: HoldSwitchOptions): SwitchHold {
  const heartbeatMs = options.heartbeatMs ?? 1_000;
  const reconnectMs = options.reconnectMs ?? 200;
  const maxReconnectMs = Math.max(reconnectMs, options.maxReconnectMs ?? 5_000);
  /** the next reconnect's wait: back to reconnectMs once the daemon accepted a connection */
  let backoff = reconnectMs;
  let socket: Socket | undefined;
  let connected = false;
  let version: GuardVersion = options.version ?? 2;
  let closed = false;
  const timers = options.timers ?? systemTimers();
  let beat: TimerHandle | undefined;
  let retry: TimerHandle | undefined;
  const named = new Set(options.accounts.map((a) => a.toLowerCase()));
  /** the latest announcement per account, as its lines: written on each change and again after each reconnect */
  const announced = new Map<string, string[]>();
  const writeOrders = (s: Socket, lines: readonly string[]) => {
    if (!connected || version < 2 || s.destroyed) return false;
    s.write(lines.join(""));
    return true;
  };
  const heartbeat = (s: Socket) => {
    beat = timers.after(heartbeatMs, () => {
      s.write("\n");
      heartbeat(s);
    });
  };

  const open = () => {
    if (closed) return;
    const to = target(options.socket);
    const s = "path" in to ? connect({ path: to.path }) : connect({ host: to.host, port: to.port });
    socket = s;
    s.setEncoding("utf8");
    let answer = "";
    s.on("connect", () => {
      s.write(guardHelloLine(options.accounts, version));
      heartbeat(s);
    });
    s.on("data", (chunk: string) => {
      answer += chunk;
      for (let nl = answer.indexOf("\n"); nl >= 0; nl = answer.indexOf("\n")) {
        const line = answer.slice(0, nl).replace(/\r$/, "");
        answer = answer.slice(nl + 1);
        if (connected) {
          const notice = parseGuardNotice(line);
          if (notice) options.onNotice?.(notice);
        } else if (line === "ok") {
          connected = true;
          backoff = reconnectMs;
          for (const lines of announced.values()) writeOrders(s, lines);
          options.onState?.("connected");
        } else {
          // A daemon older than version 2 refuses the version: speak 1 from the next connection on.
          if (version === 2 && /not supported/.test(line)) version = 1;
          options.onState?.("refused", line.replace(/^refused /, ""));
        }
      }
      // a daemon's line is at most a few hundred bytes; anything longer without a newline is not ours to keep
      if (answer.length > 4096) answer = "";
    });
    s.on("error", () => undefined); // the close follows
    s.on("close", () => {
      beat?.cancel();
      const was = connected;
      connected = false;
      if (was) options.onState?.("disconnected");
      if (closed) return;
      retry = timers.after(backoff, open);
      backoff = Math.min(backoff * 2, maxReconnectMs);
    });
  };
  open();

  const end = (last: string) =>
    new Promise<void>((resolve) => {
      closed = true;
      retry?.cancel();
      beat?.cancel();
      const s = socket;
      if (!s || s.destroyed) return resolve();
      s.once("close", () => resolve());
      s.end(last);
    });

  return {
    get connected() {
      return connected;
    },
    detach: (ms) => end(`detach ${Math.round(ms)}\n`),
    close: () => end(""),
    announceOrders(account, orders) {
      const a = account.toLowerCase();
      if (!named.has(a)) throw new Error(`${account} is not an account this engine named`);
      const lines = guardOrdersLines(a, orders);
      announced.set(a, lines);
      return socket !== undefined && writeOrders(socket, lines);
    },
  };
}
