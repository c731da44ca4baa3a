/**
 * The simulator's in-memory world: accounts (users, their agents and vaults), schedules, triggers, open
 * orders, positions, marks, per-signer nonce sets and a log of every request. Everything reads time from
 * the injected Clock, so a ManualClock drives triggers and the 00:00 UTC reset. The records it keeps are
 * ./records.ts's, the perp universe ./universe.ts's, and GET /admin/state's summary ./summary.ts's.
 */
import { keccak256 } from "ethers/crypto";
import { toUtf8Bytes } from "ethers/utils";
import { normalizeAddress } from "../core/address.js";
import { type Clock, utcDay } from "../core/clock.js";
import { ArgumentError } from "../core/errors/argument.js";
import { parse } from "../core/errors/parse.js";
import { decimal } from "./format.js";
import {
  DEFAULT_AGENT_LIFETIME_MS,
  DEFAULT_BOOK,
  HISTORICAL_ORDERS_LIMIT,
  type ReceivedAction,
  type SimAccount,
  type SimAgent,
  type SimBook,
  type SimEndpoint,
  type SimExplorerTx,
  type SimFill,
  type SimHistoricalOrder,
  type SimOrder,
  SimOrderInput,
  type SimPosition,
  SimPositionInput,
  type SimTrigger,
  SimUserInput,
  USER_FILLS_LIMIT,
} from "./records.js";
import { coinOnDex, maxLeverageOf, SimUniverse, sizeText } from "./universe.js";

export interface SimState {
  getSchedule(user: string): number | null;
  /** sets (or with null removes) a user's scheduled cancel as if an action had set it (tests, rehearsals) */
  setSchedule(user: string, time: number | null): void;
  getTriggers(user: string): ReadonlyArray<SimTrigger>;
  triggersOn(user: string, day: string): number;
  getOpenOrders(user: string): ReadonlyArray<SimOrder>;
  getPositions(user: string): ReadonlyArray<SimPosition>;
  /** every /exchange request that reached the handler, in arrival order */
  readonly actions: ReadonlyArray<ReceivedAction>;
  /** every request to any endpoint, faulted ones included (for counting retries / storms) */
  requestCount(endpoint?: SimEndpoint): number;
  setVolume(user: string, usd: number): void;
  setMark(coin: string, px: string | number): void;
  getMark(coin: string): number | undefined;
  addOrder(user: string, o: SimOrderInput): SimOrder;
  addPosition(user: string, p: SimPositionInput): SimPosition;
  /** approves `agent` (an API wallet) to sign for the registered `user` */
  addAgent(agent: string, user: string): void;
  /** fire due schedules now (also runs automatically on clock change and on a timer with the real clock) */
  tick(): void;
  /**
   * approveAgent as the exchange does it: a named agent replaces (deregisters) the user's agent of the same
   * name; validUntil defaults to now + 180 days.
   */
  approveAgent(args: { user: string; agent: string; name?: string; validUntil?: number }): SimAgent;
  /** deregisters an agent (as an operator removing it in the UI would) */
  removeAgent(agent: string): boolean;
  getAgents(user: string): ReadonlyArray<SimAgent>;
  getHistoricalOrders(user: string): ReadonlyArray<SimHistoricalOrder>;
  /** the explorer's list for an address (as the user, the signer or the target), newest first */
  explorerTxs(address: string): ReadonlyArray<SimExplorerTx>;
  /** the first perp dex's universe (asset index = position) */
  readonly universe: ReadonlyArray<string>;
  /** a perp dex's universe (coins named `dex:COIN` on a builder-deployed dex); [] for an unknown dex */
  universeOf(dex: string): ReadonlyArray<string>;
  /** the perp dexes in `perpDexs` order: "" (the first perp dex) first */
  readonly dexes: ReadonlyArray<string>;
  /** the fills of an account, oldest first */
  getFills(user: string): ReadonlyArray<SimFill>;
  /** sets a coin's book (spread around the mark, depth per order) */
  setBook(coin: string, book: Partial<SimBook>): SimBook;
  getBook(coin: string): SimBook;
}

export type SimStoreOptions = {
  clock: Clock;
  dailyTriggerLimit: number;
  countEmptyTriggers: boolean;
  /** the newest transactions the explorer keeps per address (older ones drop off the list). Default 2000. */
  explorerTxLimit?: number;
  /**
   * Whether a fired schedule also cancels the orders on builder-deployed dexes (the exchange's docs do not say;
   * the `fireMissesBuilderDexes` fault answers false). Default: it does.
   */
  fireReachesBuilderDexes?: () => boolean;
};

const MAX_ACTIONS = 100_000;

/** The concrete state behind SimState, shared by the exchange, info and admin handlers. */
export class SimStore implements SimState {
  readonly clock: Clock;
  readonly options: SimStoreOptions;
  readonly accounts = new Map<string, SimAccount>();
  /** agent address → user address */
  readonly agents = new Map<string, string>();
  /** agent address → name and expiry (every entry of `agents` has one) */
  readonly agentInfo = new Map<string, SimAgent>();
  /** the perp dexes in `perpDexs` order ("" first) and each one's universe */
  readonly #assets = new SimUniverse();
  /** address (user, signer or target) → its L1 transactions, oldest first */
  readonly #explorer = new Map<string, SimExplorerTx[]>();
  #block = 1_000_000;
  readonly marks = new Map<string, number>();
  readonly books = new Map<string, SimBook>();
  #nextTid = 1;
  /** per-signer nonce set, ascending, at most 100 (docs/exchange-behaviour.md §8) */
  readonly nonces = new Map<string, number[]>();
  readonly #actions: ReceivedAction[] = [];
  readonly #counts: Record<SimEndpoint, number> = { exchange: 0, info: 0, evm: 0, explorer: 0 };
  #nextOid = 1_000_001;
  /** Called whenever a schedule is set, replaced, removed or fired (the server re-arms its timer). */
  onScheduleChange: () => void = () => {};
  /** Called after each trigger (for logging in `hl-deadman sim`). */
  onTrigger: (user: string, trigger: SimTrigger) => void = () => {};
  /** Called whenever a user's open orders change (the WebSocket's `openOrders` pushes the new list). */
  onOrdersChange: (user: string) => void = () => {};

  constructor(options: SimStoreOptions) {
    this.clock = options.clock;
    this.options = options;
  }

  get actions(): ReadonlyArray<ReceivedAction> {
    return this.#actions;
  }

  recordAction(a: ReceivedAction): void {
    this.#actions.push(a);
    // A long `hl-deadman sim` run keeps the newest 100,000 (a daemon pushing every 15 s makes 5,760 a day).
    if (this.#actions.length > MAX_ACTIONS + 10_000)
      this.#actions.splice(0, this.#actions.length - MAX_ACTIONS);
  }

  countRequest(endpoint: SimEndpoint): void {
    this.#counts[endpoint]++;
  }

  /** the requests counted so far, per endpoint (a copy) */
  requestCounts(): Record<SimEndpoint, number> {
    return { ...this.#counts };
  }

  requestCount(endpoint?: SimEndpoint): number {
    if (endpoint) return this.#counts[endpoint];
    return this.#counts.exchange + this.#counts.info + this.#counts.evm + this.#counts.explorer;
  }

  account(address: string): SimAccount | undefined {
    return this.accounts.get(address.toLowerCase());
  }

  #ensureAccount(address: string, isUser: boolean): SimAccount {
    const key = address.toLowerCase();
    let acc = this.accounts.get(key);
    if (!acc) {
      acc = {
        address: key,
        volumeUsd: 0,
        volumeGate: undefined,
        balanceUsd: 0,
        addressBudget: undefined,
        requestsUsed: 0,
        master: null,
        isUser,
        orders: [],
        positions: [],
        schedule: null,
        triggers: [],
        history: [],
        fills: [],
      };
      this.accounts.set(key, acc);
    }
    if (isUser) acc.isUser = true;
    return acc;
  }

  /** Registers (or updates) a user; throws ValidationError naming the bad field. */
  addUser(input: SimUserInput): SimAccount {
    const u = parse(SimUserInput, input, "simulator user");
    const acc = this.#ensureAccount(u.address, true);
    acc.volumeUsd = u.volumeUsd;
    acc.volumeGate = u.volumeGate;
    acc.balanceUsd = u.balanceUsd;
    acc.addressBudget = u.addressBudget;
    u.agents.forEach((agent, i) => {
      this.approveAgent({ user: acc.address, agent, name: `agent-${i + 1}` });
    });
    for (const vault of u.vaults) {
      const v = this.#ensureAccount(vault, false);
      v.master = acc.address;
      if (!v.isUser) v.volumeUsd = acc.volumeUsd;
    }
    for (const o of u.orders) this.addOrder(acc.address, o);
    for (const p of u.positions) this.addPosition(acc.address, p);
    return acc;
  }

  /**
   * Approves `agent` to sign for `user` (which must be registered). An agent that was a registered user (the demo
   * account in `sim --user MASTER --agent DEMO=MASTER`) stops being one, as on the exchange an address is one or
   * the other: its open orders, positions and balance become the user's, so a rehearsal with the demo key arms and
   * protects the master's book.
   */
  addAgent(agent: string, user: string): void {
    const acc = this.account(normalizeAddress(user, "agent user"));
    if (!acc?.isUser) throw new ArgumentError(`user ${user} is not registered with the simulator`);
    const former = this.account(normalizeAddress(agent, "agent"));
    if (former?.isUser && former.address !== acc.address) {
      former.isUser = false;
      acc.orders.push(...former.orders.map((o) => ({ ...o, user: acc.address })));
      for (const p of former.positions) {
        acc.positions = acc.positions.filter((x) => !(x.coin === p.coin && x.dex === p.dex));
        acc.positions.push(p);
      }
      acc.balanceUsd += former.balanceUsd;
      former.orders = [];
      former.positions = [];
      former.balanceUsd = 0;
      this.onOrdersChange(acc.address);
      this.onOrdersChange(former.address);
    }
    this.approveAgent({ user: acc.address, agent, name: `agent-${this.getAgents(acc.address).length + 1}` });
  }

  approveAgent({
    user,
    agent,
    name = "",
    validUntil,
  }: {
    user: string;
    agent: string;
    name?: string;
    validUntil?: number;
  }): SimAgent {
    const acc = this.account(normalizeAddress(user, "agent user"));
    if (!acc?.isUser) throw new ArgumentError(`user ${user} is not registered with the simulator`);
    const address = normalizeAddress(agent, "agent");
    // One agent per name per user: approving a name again deregisters the agent that had it (the docs'
    // nonces and API wallets page); the unnamed agent ("") is replaced the same way.
    for (const other of this.getAgents(acc.address)) {
      if (other.name === name) this.removeAgent(other.address);
    }
    const info: SimAgent = {
      address,
      user: acc.address,
      name,
      validUntil: validUntil ?? this.clock.now() + DEFAULT_AGENT_LIFETIME_MS,
    };
    this.agents.set(address, acc.address);
    this.agentInfo.set(address, info);
    return info;
  }

  removeAgent(agent: string): boolean {
    const key = agent.toLowerCase();
    this.agentInfo.delete(key);
    return this.agents.delete(key);
  }

  getAgents(user: string): ReadonlyArray<SimAgent> {
    const key = user.toLowerCase();
    return [...this.agentInfo.values()].filter((a) => a.user === key);
  }

  getFills(user: string): ReadonlyArray<SimFill> {
    return this.account(user)?.fills ?? [];
  }

  setBook(coin: string, book: Partial<SimBook>): SimBook {
    const next = { ...this.getBook(coin), ...book };
    if (!Number.isInteger(next.spreadBps) || next.spreadBps < 0 || next.spreadBps > 5000)
      throw new ArgumentError(
        `spreadBps for ${coin} must be an integer from 0 to 5000, got ${next.spreadBps}`,
      );
    if (next.depth !== null && !(Number.isFinite(next.depth) && next.depth >= 0))
      throw new ArgumentError(`depth for ${coin} must be a number >= 0 or null, got ${String(next.depth)}`);
    this.books.set(coin, next);
    return next;
  }

  getBook(coin: string): SimBook {
    return this.books.get(coin) ?? DEFAULT_BOOK;
  }

  /** Records a fill (the newest USER_FILLS_LIMIT are kept); `tid` is assigned here. */
  recordFill(acc: SimAccount, fill: Omit<SimFill, "tid">): SimFill {
    const f: SimFill = { ...fill, tid: this.#nextTid++ };
    acc.fills.push(f);
    if (acc.fills.length > USER_FILLS_LIMIT) acc.fills.splice(0, acc.fills.length - USER_FILLS_LIMIT);
    return f;
  }

  /** A new order id (orders placed through the `order` action, resting or not). */
  nextOid(): number {
    return this.#nextOid++;
  }

  /** Ends an order that never rested (filled at once, or refused) into the history with `status`. */
  rememberOrder(acc: SimAccount, order: SimOrder, status: string, at: number): void {
    this.#remember(acc, order, status, at);
  }

  getHistoricalOrders(user: string): ReadonlyArray<SimHistoricalOrder> {
    return this.account(user)?.history ?? [];
  }

  get universe(): ReadonlyArray<string> {
    return this.#assets.universe;
  }

  get dexes(): ReadonlyArray<string> {
    return this.#assets.dexes;
  }

  universeOf(dex: string): ReadonlyArray<string> {
    return this.#assets.universeOf(dex);
  }

  /** Registers a builder-deployed perp dex (appended to `perpDexs`); "" is always there. */
  addDex(dex: string): number {
    return this.#assets.addDex(dex);
  }

  /** The asset id of a perp coin on `dex` (appended to that dex's universe when new). */
  assetIndex(coin: string, dex = ""): number {
    return this.#assets.assetIndex(coin, dex);
  }

  /** The coin and dex an asset id names, or undefined. */
  assetOf(asset: number): { coin: string; dex: string } | undefined {
    return this.#assets.assetOf(asset);
  }

  /** Records an L1 transaction under each address that should list it (deduplicated). */
  recordTx(
    addresses: ReadonlyArray<string | null>,
    tx: { action: Record<string, unknown>; error: string | null; user: string; nonce: number },
  ): SimExplorerTx {
    const time = this.clock.now();
    const block = ++this.#block;
    let hash: string | undefined;
    const entry: SimExplorerTx = {
      action: tx.action,
      block,
      error: tx.error,
      // computed when first read (the explorer's answer), not for every action: ~25 µs of keccak each
      get hash() {
        hash ??= keccak256(toUtf8Bytes(`${block}:${tx.user}:${tx.nonce}`));
        return hash;
      },
      time,
      user: tx.user,
    };
    const limit = this.options.explorerTxLimit ?? 2000;
    for (const a of new Set(addresses.filter((x): x is string => x !== null).map((x) => x.toLowerCase()))) {
      const list = this.#explorer.get(a) ?? [];
      list.push(entry);
      if (list.length > limit) list.splice(0, list.length - limit);
      this.#explorer.set(a, list);
    }
    return entry;
  }

  explorerTxs(address: string): ReadonlyArray<SimExplorerTx> {
    return [...(this.#explorer.get(address.toLowerCase()) ?? [])].reverse();
  }

  /** Moves an order off the book into the history with `status` (the docs' status strings). */
  endOrder(acc: SimAccount, oid: number, status: string, at: number): SimOrder | null {
    const i = acc.orders.findIndex((o) => o.oid === oid);
    if (i < 0) return null;
    const [order] = acc.orders.splice(i, 1);
    this.#remember(acc, order!, status, at);
    this.onOrdersChange(acc.address);
    return order!;
  }

  #remember(acc: SimAccount, order: SimOrder, status: string, at: number): void {
    acc.history.push({ order, status, statusTimestamp: at });
    if (acc.history.length > HISTORICAL_ORDERS_LIMIT)
      acc.history.splice(0, acc.history.length - HISTORICAL_ORDERS_LIMIT);
  }

  /** The user a signer acts as: itself when registered, else the user that approved it as an agent. */
  userForSigner(signer: string): string | null {
    const key = signer.toLowerCase();
    if (this.accounts.get(key)?.isUser) return key;
    const info = this.agentInfo.get(key);
    // An expired agent is pruned: it signs for no one (the docs' nonces and API wallets page).
    if (info && info.validUntil <= this.clock.now()) return null;
    return this.agents.get(key) ?? null;
  }

  getSchedule(user: string): number | null {
    return this.account(user)?.schedule ?? null;
  }

  getTriggers(user: string): ReadonlyArray<SimTrigger> {
    return this.account(user)?.triggers ?? [];
  }

  triggersOn(user: string, day: string): number {
    return this.getTriggers(user).filter((t) => t.counted && t.day === day).length;
  }

  getOpenOrders(user: string): ReadonlyArray<SimOrder> {
    return this.account(user)?.orders ?? [];
  }

  getPositions(user: string): ReadonlyArray<SimPosition> {
    return this.account(user)?.positions ?? [];
  }

  setVolume(user: string, usd: number): void {
    if (!Number.isFinite(usd) || usd < 0)
      throw new ArgumentError(`volume must be a finite number >= 0, got ${usd}`);
    this.#ensureAccount(normalizeAddress(user, "setVolume"), true).volumeUsd = usd;
  }

  setMark(coin: string, px: string | number): void {
    const n = Number(px);
    if (!Number.isFinite(n) || n <= 0)
      throw new ArgumentError(`mark for ${coin} must be > 0, got ${String(px)}`);
    this.marks.set(coin, n);
  }

  getMark(coin: string): number | undefined {
    return this.marks.get(coin);
  }

  addOrder(user: string, input: SimOrderInput): SimOrder {
    const o = parse(SimOrderInput, input, "simulator order");
    const acc = this.#ensureAccount(normalizeAddress(user, "addOrder"), false);
    const isTrigger = o.orderType !== "Limit";
    const coin = coinOnDex(o.coin, o.dex);
    this.assetIndex(coin, o.dex);
    const order: SimOrder = {
      oid: this.#nextOid++,
      user: acc.address,
      coin,
      side: o.side,
      limitPx: decimal(o.limitPx, 8),
      sz: sizeText(coin, o.sz),
      origSz: sizeText(coin, o.sz),
      timestamp: this.clock.now(),
      dex: o.dex,
      cloid: o.cloid ?? null,
      reduceOnly: o.reduceOnly,
      orderType: o.orderType,
      tif: isTrigger ? null : o.tif,
      isTrigger,
      triggerPx: decimal(o.triggerPx ?? 0, 8),
      triggerCondition: isTrigger
        ? `Price ${o.side === "B" ? "above" : "below"} ${decimal(o.triggerPx ?? o.limitPx, 8)}`
        : "N/A",
    };
    acc.orders.push(order);
    this.onOrdersChange(acc.address);
    return order;
  }

  addPosition(user: string, input: SimPositionInput): SimPosition {
    const p = parse(SimPositionInput, input, "simulator position");
    const acc = this.#ensureAccount(normalizeAddress(user, "addPosition"), false);
    const coin = coinOnDex(p.coin, p.dex);
    this.assetIndex(coin, p.dex);
    const pos: SimPosition = {
      coin,
      szi: p.szi,
      entryPx: p.entryPx,
      leverage: p.leverage,
      marginMode: p.marginMode,
      maxLeverage: p.maxLeverage ?? maxLeverageOf(coin),
      dex: p.dex,
    };
    // One-way mode: a second position on the same coin and dex replaces the first.
    acc.positions = acc.positions.filter((x) => !(x.coin === pos.coin && x.dex === pos.dex));
    acc.positions.push(pos);
    if (p.markPx !== undefined) this.marks.set(coin, p.markPx);
    else if (!this.marks.has(coin)) this.marks.set(coin, p.entryPx);
    return pos;
  }

  setSchedule(user: string, time: number | null): void {
    const acc = this.#ensureAccount(user, false);
    acc.schedule = time;
    this.onScheduleChange();
  }

  /** The earliest pending schedule time, or null (for the real-clock timer). */
  nextDue(): number | null {
    let min: number | null = null;
    for (const acc of this.accounts.values()) {
      if (acc.schedule !== null && (min === null || acc.schedule < min)) min = acc.schedule;
    }
    return min;
  }

  /**
   * Fires every schedule whose time has come, earliest first: cancels all open orders of the account,
   * records the trigger at its scheduled time (the exchange fires at that block time, even if our clock
   * jumped past it), counts it toward that UTC day (unless it cancelled nothing and countEmptyTriggers is
   * off), and clears the schedule (one-shot; docs/exchange-behaviour.md §3, assumed).
   */
  tick(): void {
    const now = this.clock.now();
    const due = [...this.accounts.values()]
      .filter((a) => a.schedule !== null && a.schedule <= now)
      .sort((a, b) => (a.schedule as number) - (b.schedule as number));
    if (due.length === 0) return;
    // Whether the fire reaches builder-deployed dexes is not documented: a fault switch offers both (faults.ts).
    const builders = this.options.fireReachesBuilderDexes?.() ?? true;
    for (const acc of due) {
      const time = acc.schedule as number;
      const reached = acc.orders.filter((o) => builders || o.dex === "");
      const cancelled = reached.length;
      // Every order the fire removes ends with status `scheduledCancel` (not "...Canceled").
      for (const o of reached) this.#remember(acc, o, "scheduledCancel", time);
      acc.orders = acc.orders.filter((o) => !reached.includes(o));
      if (cancelled > 0) this.onOrdersChange(acc.address);
      const trigger: SimTrigger = {
        time,
        day: utcDay(time),
        cancelledOrders: cancelled,
        counted: cancelled > 0 || this.options.countEmptyTriggers,
      };
      acc.triggers.push(trigger);
      acc.schedule = null;
      this.onTrigger(acc.address, trigger);
    }
    this.onScheduleChange();
  }
}
