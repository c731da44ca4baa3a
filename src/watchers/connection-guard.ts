/**
 * The connection guard (`--guard-socket`, docs/operations.md "Cancel on disconnect"): the trading engine holds a
 * connection to the daemon, on a Unix socket (mode 0660) or on loopback TCP, and its first line names the accounts
 * it guards (src/core/guard-protocol.ts). The kernel closes a dead process's connections at once, so a crash is
 * seen in milliseconds, not after a file's max age. Per account:
 * - `waiting` from the daemon's start until an engine first names it: pushes go on, nothing is cancelled (the engine
 *   may not be started yet, or is reconnecting after a daemon restart), readiness says so. An account the ledger says
 *   an engine held before (`heldBefore`) waits only `connectGraceMs` after the start: no engine named it by then, it
 *   is `down` with the cause `absent` (a host crash took engine and daemon; only the daemon came back), so the dead
 *   engine's orders are not left resting for ever. Absence is weaker evidence than a close seen: the switch's
 *   escalation never starts its closes on it alone (src/escalation/);
 * - `up` while at least one connection naming it is open (a second connection for the same account is a second
 *   holder: a new engine started before the old one stops is a hand-over, never a down);
 * - `detached` after its last connection closed within a `detach <ms>` grace: up for the switch until the grace ends;
 * - `down` when its last connection closed (or fell silent past `heartbeatGapMs`, when set) outside a grace: the
 *   switch hears `onChange(account, false, detail)` at once, in the same turn of the event loop as the close.
 *   Silence counts only over time the daemon was awake to hear it (src/watchers/liveness.ts): what the connection
 *   already holds is read before it is judged silent, and a late wake-up postpones the judgement.
 * A version 2 engine may announce each account's resting orders (`orders` lines): the guard keeps the latest whole
 * announcement per account (src/watchers/announced-orders.ts), for the cancel pass at the engine's death.
 * Bounded: line length, connections, time to the first line, orders per account. A malformed first line is refused with a one-line
 * reason, logged, and changes nothing. What it sees it publishes on the bus (src/core/events.ts `GuardEvent`);
 * its log lines and metric are subscribers in src/surface/watchers/guard.ts.
 */
import { chmod, lstat, unlink } from "node:fs/promises";
import { createServer, type Server, type Socket } from "node:net";
import type { GuardSocketAddress } from "../config/listen.js";
import { monotonicOf } from "../core/clock.js";
import type { EngineAccountState, EngineDownCause, EventBus } from "../core/events.js";
import {
  type AnnouncedOrder,
  GUARD_MAX_LINE_BYTES,
  GUARD_MAX_ORDERS,
  type GuardNotice,
  type GuardVersion,
  guardNoticeLine,
  parseGuardHello,
  parseGuardLine,
} from "../core/guard-protocol.js";
import { afterTimed, type Runtime, type TimerHandle } from "../core/runtime.js";
import type { GuardStatus } from "../core/status.js";
import { type AnnouncedOrders, createAnnouncedOrders } from "./announced-orders.js";
import { checked, dueAt, heard, type Liveness, livenessStart } from "./liveness.js";

/**
 * At most this many connections at once (an engine needs one per process; a stray client cannot exhaust fds): room
 * for 300 accounts with an engine each, and each of them handing over to a new engine (two holders for a moment),
 * with some to spare. Each connection is one file descriptor of the daemon's.
 */
export const GUARD_MAX_CONNECTIONS = 640;
/** A connection that sends no first line within this is refused (it holds a slot and guards nothing). */
export const GUARD_HELLO_TIMEOUT_MS = 5_000;
/** The Unix socket's mode: owner and group (the engine's user in the daemon's group) may connect. */
export const GUARD_SOCKET_MODE = 0o660;
/** What an account an engine held, and none named within the connect grace after a restart, is down for. */
export const ABSENT_DETAIL = (graceMs: number) =>
  `no engine named it within the grace after a restart (${graceMs} ms; an engine held it before)`;

/**
 * The connect grace after a restart: at its end, each account an engine held before (`heldBefore`) that is still
 * `waiting` (no engine named it meanwhile) is reported `absent`; one an engine named is left as it is, whatever it
 * became since (up, detached, down on a close seen). Nothing to wait for (no account held): no timer. Shared with
 * the switch's property world (test/switch/world.ts), which drives it on its own timers.
 */
export function armConnectGrace(p: {
  heldBefore: readonly string[];
  graceMs: number;
  timers: Pick<Runtime["timers"], "after">;
  waiting: (account: string) => boolean;
  absent: (account: string) => void;
}): TimerHandle | undefined {
  if (p.heldBefore.length === 0) return undefined;
  return p.timers.after(p.graceMs, () => {
    for (const a of p.heldBefore) if (p.waiting(a)) p.absent(a);
  });
}

export type CreateConnectionGuardParameters = {
  address: GuardSocketAddress;
  /** the daemon's accounts: an engine naming another is refused */
  accounts: readonly string[];
  /** silence longer than this on a connection → its accounts down; 0: only the close counts */
  heartbeatGapMs: number;
  runtime: Runtime;
  /** the daemon's event bus, where its log lines and metric subscribe (src/surface/watchers/guard.ts) */
  bus: EventBus;
  onChange: (account: string, up: boolean, detail: string | null, cause: EngineDownCause) => void;
  /**
   * accounts the ledger says an engine held before this start (src/switch/ledger.ts `enginesHeld`): each waits at
   * most `connectGraceMs` from `start` for an engine to name it, then is down (`absent`)
   */
  heldBefore?: readonly string[] | undefined;
  connectGraceMs?: number | undefined;
  /** an engine named `account` (first `up` of this run): the app records it in the ledger, once */
  onHeld?: ((account: string) => void) | undefined;
  maxConnections?: number;
  helloTimeoutMs?: number;
  /** where the engines' announced orders are kept (shared with the cancel pass); absent: the guard's own */
  announced?: AnnouncedOrders | undefined;
};

export type ConnectionGuard = {
  /** Listens; rejects when the address cannot be bound (a path that exists and is not a socket, a taken port). */
  start(): Promise<void>;
  /** Closes the listener and every connection; no account changes state (the daemon is going). */
  stop(): Promise<void>;
  /** Where it listens (a path, or host:port with the port bound). */
  address(): string;
  /** The engine of `account` as the switch should see it: up unless `down` (then why: `cause`). */
  engine(account: string): { up: boolean; detail: string | null; cause: EngineDownCause };
  status(): GuardStatus;
  /**
   * Tells the engines holding `notice.account` (version 2 connections only; version 1 engines are never sent a
   * line). A `halted` notice is kept until `resumed`, and a `drill` until its time, and replayed to an engine that
   * connects later, so an engine that restarts learns the account is HALTED. Returns how many engines were told.
   */
  tell(notice: GuardNotice): number;
  /** The resting orders an engine last announced for `account` (version 2), whole, or undefined. */
  orders(account: string): readonly AnnouncedOrder[] | undefined;
};

type Connection = {
  id: number;
  socket: Socket;
  accounts: string[] | null;
  /** the protocol version of its first line (1 until it is read) */
  version: GuardVersion;
  buffer: string;
  discarding: boolean;
  detachUntil: number | null;
  /** what the liveness rule knows of this connection's lines (with a heartbeat gap, after its first line) */
  live: Liveness | null;
  /** per account, an `orders` announcement whose parts are still coming: how many, and the orders so far */
  pending: Map<string, { parts: number; got: number; orders: AnnouncedOrder[] }>;
  timer: TimerHandle | undefined;
  gone: boolean;
};

export function createConnectionGuard(params: CreateConnectionGuardParameters): ConnectionGuard {
  const { address, runtime, heartbeatGapMs, onChange } = params;
  const { clock, timers } = runtime;
  const mono = () => monotonicOf(clock);
  const maxConnections = params.maxConnections ?? GUARD_MAX_CONNECTIONS;
  const helloTimeoutMs = params.helloTimeoutMs ?? GUARD_HELLO_TIMEOUT_MS;
  const { bus } = params;
  const known = new Set(params.accounts.map((a) => a.toLowerCase()));
  const announced = params.announced ?? createAnnouncedOrders([...known]);
  const state = new Map<
    string,
    {
      state: EngineAccountState;
      detail: string;
      grace?: TimerHandle | undefined;
      cause?: EngineDownCause | undefined;
    }
  >();
  for (const a of known) state.set(a, { state: "waiting", detail: "waiting for the engine to connect" });
  // After a restart: the accounts an engine held wait at most the connect grace (see the header).
  const connectGraceMs = Math.max(0, params.connectGraceMs ?? 0);
  const heldBefore = [...new Set((params.heldBefore ?? []).map((a) => a.toLowerCase()))].filter((a) =>
    known.has(a),
  );
  for (const a of heldBefore)
    state.get(a)!.detail =
      `waiting for the engine that held it before this start: down if none names it within ${connectGraceMs} ms`;
  let connectGrace: TimerHandle | undefined;
  /** accounts recorded as held (the ledger's, and those named in this run): `onHeld` once each */
  const held = new Set(heldBefore);
  const holders = new Map<string, Set<Connection>>();
  /** per account, what a version 2 engine that connects is told first (HALTED; a drill not yet past) */
  const notices = new Map<string, { halted?: GuardNotice | undefined; drill?: GuardNotice | undefined }>();
  const send = (c: Connection, notice: GuardNotice) => {
    if (c.gone || c.version < 2 || c.socket.destroyed) return false;
    c.socket.write(guardNoticeLine(notice));
    return true;
  };
  const connections = new Set<Connection>();
  /** every open socket, refused ones too, so that stop closes them all */
  const sockets = new Set<Socket>();
  let server: Server | undefined;
  let nextId = 1;
  let stopped = false;
  let lastChangeAt: number | null = null;
  let aggregateUp = true;
  const shown = address.kind === "unix" ? address.path : `${address.host}:${address.port}`;
  let bound = shown;
  bus.publish({ module: "guard", type: "guardConfigured", kind: "socket" });

  const publishAggregate = () => {
    const down = [...state.entries()].filter(([, s]) => s.state === "down");
    const up = down.length === 0;
    if (up === aggregateUp) return;
    aggregateUp = up;
    bus.publish({
      module: "guard",
      type: "engineChanged",
      kind: "socket",
      up,
      detail: up
        ? "every account's engine is connected or waiting"
        : `engine down for ${down.map(([a]) => a).join(", ")}`,
    });
  };

  const setAccount = (
    account: string,
    next: EngineAccountState,
    detail: string,
    cause: EngineDownCause = "seen",
  ) => {
    const s = state.get(account)!;
    s.grace?.cancel();
    s.grace = undefined;
    s.cause = cause;
    if (next === "up" && !held.has(account)) {
      held.add(account);
      params.onHeld?.(account);
    }
    const wasUp = s.state !== "down";
    const isUp = next !== "down";
    if (s.state === next) {
      s.detail = detail;
      return;
    }
    s.state = next;
    s.detail = detail;
    lastChangeAt = clock.now();
    bus.publish({ module: "guard", type: "engineAccount", account, state: next, detail });
    publishAggregate();
    // Only up <-> down reaches the switch: waiting and detached keep it pushing as before.
    if (wasUp !== isUp) onChange(account, isUp, detail, cause);
  };

  const arm = (c: Connection) => {
    c.timer?.cancel();
    c.timer = undefined;
    if (c.gone) return;
    if (c.accounts === null) {
      c.timer = timers.after(helloTimeoutMs, () => refuse(c, `no first line within ${helloTimeoutMs} ms`));
      return;
    }
    if (c.live === null) return;
    checkAt(c, Math.max(dueAt(c.live), c.detachUntil ?? 0));
  };

  /** The connection's next check, at `at` (monotonic ms); at once is after one I/O turn (what is waiting is read). */
  const checkAt = (c: Connection, at: number) => {
    c.timer?.cancel();
    c.timer = afterTimed(runtime, at - mono(), ({ lateMs }) => judge(c, lateMs));
  };

  /**
   * Silence is judged by the liveness rule (src/watchers/liveness.ts): a late wake-up postpones it, an on-time one
   * that finds the gap reached reads what the connection holds first (one more turn), and only then is it down.
   */
  const judge = (c: Connection, lateMs: number) => {
    c.timer = undefined;
    if (c.gone || c.live === null) return;
    const now = mono();
    if ((c.detachUntil ?? 0) > now) return arm(c);
    const { state: next, verdict } = checked(c.live, now, lateMs);
    c.live = next;
    if (verdict.kind === "wait") return checkAt(c, Math.max(verdict.at, c.detachUntil ?? 0));
    if (verdict.kind === "confirm") return checkAt(c, now);
    drop(c, "silent", `no heartbeat for ${Math.round(verdict.silentMs)} ms (gap ${heartbeatGapMs} ms)`);
    c.socket.destroy();
  };

  const refuse = (c: Connection, reason: string, hello?: { version: string; accounts: string[] }) => {
    if (c.gone) return;
    c.gone = true;
    c.timer?.cancel();
    connections.delete(c);
    bus.publish({ module: "guard", type: "engineRefused", connection: c.id, reason, hello });
    // Answered, then closed whatever the peer does: a refused socket no longer counts against the bound.
    c.socket.end(`refused ${reason}\n`, () => c.socket.destroy());
  };

  /** The connection is gone: each account it held with no other holder goes down, or detached within a grace. */
  const drop = (c: Connection, reason: "closed" | "silent" | "stopped", detail: string) => {
    if (c.gone) return;
    c.gone = true;
    c.timer?.cancel();
    connections.delete(c);
    const accounts = c.accounts ?? [];
    if (c.accounts === null) return;
    bus.publish({ module: "guard", type: "engineDisconnected", connection: c.id, accounts, reason, detail });
    if (reason === "stopped") return;
    const now = mono();
    for (const account of accounts) {
      const set = holders.get(account);
      set?.delete(c);
      if (set && set.size > 0) continue;
      if (c.detachUntil !== null && c.detachUntil > now) {
        const until = c.detachUntil;
        setAccount(
          account,
          "detached",
          `engine detached (${detail}); back within ${Math.round(until - now)} ms`,
        );
        state.get(account)!.grace = timers.after(until - now, () => {
          if ((holders.get(account)?.size ?? 0) === 0)
            setAccount(account, "down", "engine detached and did not come back within its grace");
        });
      } else
        setAccount(
          account,
          "down",
          `engine connection ${reason === "silent" ? "silent" : "closed"}: ${detail}`,
        );
    }
  };

  const hello = (c: Connection, line: string) => {
    const parsed = parseGuardHello(line);
    if (!parsed.ok) return refuse(c, parsed.reason, { version: parsed.version, accounts: parsed.accounts });
    const unknown = parsed.accounts.filter((a) => !known.has(a));
    if (unknown.length > 0)
      return refuse(c, `not an account of this daemon: ${unknown.join(", ")}`, {
        version: `hl-deadman-guard/${parsed.version}`,
        accounts: parsed.accounts,
      });
    c.accounts = parsed.accounts;
    c.version = parsed.version;
    if (heartbeatGapMs > 0) c.live = livenessStart(heartbeatGapMs, mono());
    for (const a of parsed.accounts) {
      const set = holders.get(a) ?? new Set<Connection>();
      holders.set(a, set);
      set.add(c);
    }
    c.socket.write("ok\n");
    for (const a of parsed.accounts) {
      const n = notices.get(a);
      if (n?.halted) send(c, n.halted);
      if (n?.drill?.type === "drill" && n.drill.until > clock.now()) send(c, n.drill);
    }
    bus.publish({
      module: "guard",
      type: "engineConnected",
      connection: c.id,
      accounts: parsed.accounts,
      connections: connections.size,
    });
    for (const a of parsed.accounts) setAccount(a, "up", `engine connected (connection ${c.id})`);
    arm(c);
  };

  const line = (c: Connection, text: string) => {
    if (c.gone) return;
    if (c.accounts === null) return hello(c, text);
    if (c.live !== null) c.live = heard(c.live, mono());
    const parsed = parseGuardLine(text, c.version);
    if (parsed.type === "detach") {
      c.detachUntil = mono() + parsed.ms;
      bus.publish({
        module: "guard",
        type: "engineDetach",
        connection: c.id,
        accounts: c.accounts,
        ms: parsed.ms,
      });
    } else if (parsed.type === "orders") announce(c, parsed);
    else if (parsed.type === "ignored")
      bus.publish({ module: "guard", type: "engineLineIgnored", connection: c.id, reason: parsed.reason });
    arm(c);
  };

  /**
   * A part of an `orders` announcement: parts 1..n in order on one connection; the last replaces the account's
   * set. A part out of order, or an account the connection did not name, is ignored (logged) and drops what was
   * pending for it: a set is kept only whole, since a part missing would leave orders the pass does not know of
   * (the set before stays, and the pass's read finds the rest).
   */
  const announce = (c: Connection, p: Extract<ReturnType<typeof parseGuardLine>, { type: "orders" }>) => {
    const ignore = (reason: string) => {
      c.pending.delete(p.account);
      bus.publish({ module: "guard", type: "engineLineIgnored", connection: c.id, reason });
    };
    if (!c.accounts?.includes(p.account))
      return ignore(`"orders" for ${p.account}, which this connection did not name`);
    const before = c.pending.get(p.account);
    const next =
      p.part === 1
        ? { parts: p.parts, got: 0, orders: [] as AnnouncedOrder[] }
        : before && before.parts === p.parts && before.got === p.part - 1
          ? before
          : null;
    if (next === null) return ignore(`"orders" part ${p.part}/${p.parts} for ${p.account} out of order`);
    next.got = p.part;
    next.orders.push(...p.orders);
    if (next.orders.length > GUARD_MAX_ORDERS)
      return ignore(`"orders" for ${p.account}: more than ${GUARD_MAX_ORDERS} orders`);
    if (next.got < next.parts) {
      c.pending.set(p.account, next);
      return;
    }
    c.pending.delete(p.account);
    announced.set(p.account, { orders: next.orders, at: clock.now(), connection: c.id });
  };

  const data = (c: Connection, chunk: string) => {
    let text = c.buffer + chunk;
    for (;;) {
      const nl = text.indexOf("\n");
      if (nl < 0) break;
      const one = text.slice(0, nl);
      text = text.slice(nl + 1);
      if (c.discarding) {
        // the rest of an over-long line: it proved the engine alive, nothing more
        c.discarding = false;
        line(c, "");
      } else line(c, one);
      if (c.gone) return;
    }
    if (text.length > GUARD_MAX_LINE_BYTES) {
      if (c.accounts === null) return refuse(c, `first line longer than ${GUARD_MAX_LINE_BYTES} bytes`);
      if (!c.discarding)
        bus.publish({
          module: "guard",
          type: "engineLineIgnored",
          connection: c.id,
          reason: `line longer than ${GUARD_MAX_LINE_BYTES} bytes (read as a heartbeat)`,
        });
      c.discarding = true;
      text = "";
    }
    c.buffer = text;
  };

  const accept = (socket: Socket) => {
    const c: Connection = {
      id: nextId++,
      socket,
      accounts: null,
      version: 1,
      buffer: "",
      discarding: false,
      detachUntil: null,
      live: null,
      pending: new Map(),
      timer: undefined,
      gone: false,
    };
    socket.setEncoding("utf8");
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    socket.on("error", () => undefined); // the close that follows says it
    if (stopped || connections.size >= maxConnections) {
      const reason = stopped ? "the daemon is stopping" : `too many connections (at most ${maxConnections})`;
      bus.publish({ module: "guard", type: "engineRefused", connection: c.id, reason });
      socket.end(`refused ${reason}\n`, () => socket.destroy());
      return;
    }
    connections.add(c);
    socket.on("data", (chunk: string) => data(c, chunk));
    socket.on("close", () => drop(c, "closed", `connection ${c.id} closed`));
    arm(c);
  };

  return {
    async start() {
      if (address.kind === "unix") {
        // A socket left by a daemon that died is removed (the state-dir lock makes this daemon the only one); any
        // other file there is not ours to delete.
        const existing = await lstat(address.path).catch(() => null);
        if (existing && !existing.isSocket())
          throw new Error(
            `guard socket ${address.path} exists and is not a socket; remove it or choose another path`,
          );
        if (existing) await unlink(address.path);
      }
      server = createServer(accept);
      server.maxConnections = maxConnections + 1; // one over: the extra one is answered `refused`, not dropped
      await new Promise<void>((resolve, reject) => {
        server!.once("error", reject);
        if (address.kind === "unix") server!.listen(address.path, () => resolve());
        else server!.listen(address.port, address.host, () => resolve());
      });
      if (address.kind === "unix") await chmod(address.path, GUARD_SOCKET_MODE);
      else {
        const a = server.address();
        if (a && typeof a === "object")
          bound = address.host.includes(":") ? `[${address.host}]:${a.port}` : `${address.host}:${a.port}`;
      }
      bus.publish({
        module: "guard",
        type: "guardListening",
        kind: "socket",
        address: bound,
        accounts: [...known],
      });
      // The grace counts from when an engine can connect.
      connectGrace = armConnectGrace({
        heldBefore,
        graceMs: connectGraceMs,
        timers,
        waiting: (a) => state.get(a)!.state === "waiting",
        absent: (a) => setAccount(a, "down", ABSENT_DETAIL(connectGraceMs), "absent"),
      });
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      connectGrace?.cancel();
      for (const s of state.values()) s.grace?.cancel();
      for (const c of [...connections]) {
        drop(c, "stopped", "the daemon is stopping");
        c.socket.destroy();
      }
      for (const socket of sockets) socket.destroy();
      const s = server;
      if (s) await new Promise<void>((resolve) => s.close(() => resolve()));
      if (address.kind === "unix") await unlink(address.path).catch(() => undefined);
    },
    address: () => bound,
    tell(notice) {
      const account = notice.account.toLowerCase();
      const told = { ...notice, account } as GuardNotice;
      const n = notices.get(account) ?? {};
      if (told.type === "halted") n.halted = told;
      else if (told.type === "resumed") n.halted = undefined;
      else n.drill = told;
      notices.set(account, n);
      let count = 0;
      for (const c of holders.get(account) ?? []) if (send(c, told)) count++;
      return count;
    },
    orders: (account) => announced.get(account)?.orders,
    engine(account) {
      const s = state.get(account.toLowerCase());
      if (!s) return { up: true, detail: null, cause: "seen" };
      return { up: s.state !== "down", detail: s.detail, cause: s.cause ?? "seen" };
    },
    status() {
      const accounts: Record<string, EngineAccountState> = {};
      for (const [a, s] of state) accounts[a] = s.state;
      const down = [...state.entries()].filter(([, s]) => s.state === "down");
      const waiting = [...state.entries()].filter(([, s]) => s.state === "waiting");
      return {
        configured: true,
        // up only when no account is down and none waits: a waiting account's engine was never seen alive
        up: down.length === 0 && waiting.length === 0,
        kind: "socket",
        lastCheckAt: lastChangeAt,
        detail:
          down.length > 0
            ? down.map(([a, s]) => `${a}: ${s.detail}`).join("; ")
            : waiting.length > 0
              ? `waiting for the engine to connect for ${waiting.length} account(s); listening on ${bound}`
              : `listening on ${bound}`,
        accounts,
      };
    },
  };
}
