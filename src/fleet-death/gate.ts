/**
 * The driver of the death machine (machine.ts): it stands between the switches and the engine-down canceller, feeds
 * the machine the engines' deaths, the accounts' risk, the passes asked for and the confirming reads waiting, and
 * carries out what it commands. It decides nothing itself:
 * - `run`: the pass goes to the canceller; its answer goes back to the switch;
 * - `fallback`: the switch's pass is answered unconfirmed with the failure `weight_unaffordable` (not retryable), so
 *   the switch's own fall-back runs at once (src/switch/engine-down.ts: `engine.cancel_failed` with that reason, a
 *   push at the 5 s minimum) instead of retrying into 429s;
 * - `drop`: the engine is up again: the pass is answered without running (the switch ignores it);
 * - `confirm`: the executor's confirming read waiting on `beforeConfirm` may go (or not: the engine is back).
 * The inputs of one turn are gathered (a host's death closes every connection within one turn or a few) and decided
 * together on the next timer turn, so that the risk order covers them all.
 */
import type { AccountRisk } from "../config/weight.js";
import type { TimerHandle } from "../core/runtime.js";
import type { CancelOpenOrders, CancelOpenOrdersResult } from "../protocol/hyperliquid/cancel.js";
import {
  type DeathCommand,
  type DeathConfig,
  type DeathInput,
  type DeathModel,
  initialDeath,
  type PassCost,
  step,
} from "./machine.js";

/** The failure a fallback answers the switch with: not a request's, the plan's (never tried again). */
export const UNAFFORDABLE = "weight_unaffordable";

export type DeathGate = {
  /** the canceller the switches call (engine-down `cancel`) */
  cancel: CancelOpenOrders;
  /** the executor's hook before a confirming read: resolves true to send it, false to leave it (engine back) */
  beforeConfirm(user: string): Promise<boolean>;
  engine(account: string, up: boolean): void;
  risk(risk: AccountRisk): void;
  /** each account's deadline the exchange holds (epoch ms, the exchange's time), or null when none is known */
  attach(deadlineOf: (account: string) => number | null): void;
  close(): void;
};

export type DeathGateDeps = {
  config: DeathConfig;
  /** the canceller itself (the executor built with this gate's `beforeConfirm`) */
  canceller: () => CancelOpenOrders;
  timers: { after(ms: number, fn: () => void): TimerHandle };
  /** monotonic ms */
  mono: () => number;
  /** the exchange's time (epoch ms) */
  wall: () => number;
  /** what the account's pass weighs now (its orders known or read first, its dexes) */
  passCost: (account: string) => PassCost;
  /** the weight of one confirming read */
  confirmWeight: number;
  /** the margin a pass keeps before the deadline: the 5 s fall-back's lead and its requests' time-outs */
  marginMs: number;
  /** the account a pass is asked for by its user (a vault's address is the user) */
  accountOf: (user: string) => string;
  /** told of every command carried out (the daemon logs a decision's summary) */
  onCommands?: ((commands: readonly DeathCommand[]) => void) | undefined;
};

export function createDeathGate(deps: DeathGateDeps): DeathGate {
  let model: DeathModel = initialDeath(deps.config);
  let deadlineOf: (account: string) => number | null = () => null;
  let tick: TimerHandle | null = null;
  let wake: TimerHandle | null = null;
  let closed = false;
  let nextId = 1;
  /** the passes asked for and not yet carried out; a second ask before then shares the first one's answer */
  const asked = new Map<
    string,
    { params: Parameters<CancelOpenOrders>[0]; resolve: ((r: CancelOpenOrdersResult) => void)[] }
  >();
  /** passes the gate started, until they answer: only their confirming reads wait on the machine */
  const running = new Set<string>();
  const confirms = new Map<number, (go: boolean) => void>();

  const feed = (input: DeathInput) => {
    const r = step(model, input, deps.mono());
    model = r.model;
    if (input.type === "tick") {
      wake?.cancel();
      wake = null;
      if (r.wakeAt !== null && !closed)
        wake = deps.timers.after(Math.max(0, r.wakeAt - deps.mono()), () => feed({ type: "tick" }));
      carryOut(r.commands);
    }
  };
  const soon = () => {
    if (tick !== null || closed) return;
    tick = deps.timers.after(0, () => {
      tick = null;
      feed({ type: "tick" });
    });
  };
  const answer = (account: string, result: CancelOpenOrdersResult) => {
    const a = asked.get(account);
    asked.delete(account);
    for (const resolve of a?.resolve ?? []) resolve(result);
  };
  const carryOut = (commands: readonly DeathCommand[]) => {
    if (commands.length > 0) deps.onCommands?.(commands);
    for (const c of commands) {
      if (c.kind === "run") {
        const a = asked.get(c.account);
        if (!a) continue;
        asked.delete(c.account);
        running.add(c.account);
        void deps
          .canceller()(a.params)
          .catch(
            (error: unknown): CancelOpenOrdersResult => ({
              confirmed: false,
              cancelled: 0,
              kept: 0,
              detail: error instanceof Error ? error.message : String(error),
            }),
          )
          .then((result) => {
            running.delete(c.account);
            feed({ type: "answered", account: c.account, confirmed: result.confirmed });
            soon();
            for (const resolve of a.resolve) resolve(result);
          });
      } else if (c.kind === "fallback")
        answer(c.account, {
          confirmed: false,
          cancelled: 0,
          kept: 0,
          detail: `the IP's weight cannot afford this pass before the deadline (a simultaneous death: ${c.needed} needed, ${c.available} left for it in risk order)`,
          failure: { kind: UNAFFORDABLE, request: "read", retryable: false },
        });
      else if (c.kind === "drop")
        answer(c.account, {
          confirmed: false,
          cancelled: 0,
          kept: 0,
          detail: "the engine is up again: the pass was not run",
        });
      else {
        const go = confirms.get(c.id);
        confirms.delete(c.id);
        go?.(c.go);
      }
    }
  };

  return {
    cancel(params) {
      const account = params.account;
      return new Promise<CancelOpenOrdersResult>((resolve) => {
        if (closed) {
          resolve({ confirmed: false, cancelled: 0, kept: 0, detail: "the daemon is stopping" });
          return;
        }
        // A switch runs one pass at a time; an ask not yet carried out when another comes (the engine down, up and
        // down again within a turn) shares its answer: the switch takes the first, and ignores the second.
        const before = asked.get(account);
        asked.set(account, { params, resolve: [...(before?.resolve ?? []), resolve] });
        const deadline = deadlineOf(account);
        const now = deps.mono();
        const giveUpAt = deadline === null ? now : now + (deadline - deps.wall()) - deps.marginMs;
        feed({ type: "ask", account, giveUpAt, cost: deps.passCost(account) });
        soon();
      });
    },
    beforeConfirm(user) {
      const account = deps.accountOf(user);
      if (!running.has(account) || closed) return Promise.resolve(true);
      return new Promise<boolean>((resolve) => {
        const id = nextId++;
        confirms.set(id, resolve);
        feed({ type: "confirmAsked", account, id, weight: deps.confirmWeight });
        soon();
      });
    },
    engine(account, up) {
      feed({ type: "engine", account, up });
      soon();
    },
    risk(risk) {
      feed({ type: "risk", risk });
    },
    attach(f) {
      deadlineOf = f;
    },
    close() {
      closed = true;
      tick?.cancel();
      wake?.cancel();
      for (const account of [...asked.keys()])
        answer(account, { confirmed: false, cancelled: 0, kept: 0, detail: "the daemon is stopping" });
      for (const go of confirms.values()) go(true);
      confirms.clear();
    },
  };
}
