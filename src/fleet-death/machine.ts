/**
 * The cancel passes of a simultaneous death (a host that dies with all its engines; docs/operations.md, "A host's
 * death"), as a pure machine: it takes the engines' deaths, each account's risk and the IP's weight budget, and
 * says which pass runs now, which waits for weight, and which account falls back to the 5 s schedule at once.
 *
 * Rules, and why:
 * - A pass runs only for an account whose engine is down (a pass for a live engine would cancel its trading).
 * - The first passes run in risk order (src/config/weight.ts `orderByRisk`: nearest liquidation first, then the
 *   largest notional; unknown risk last): the weight left goes first where a trigger would cost most.
 * - A pass's in-time part (its cancels, and its read first when the orders are not known) is issued when the budget
 *   allows; its confirming reads follow, also within the budget, before any repeated pass. The weight issued in any
 *   window never exceeds the budget, so no pass retries into the exchange's 429s.
 * - A first pass that cannot be afforded in time (`affordPasses`: the whole pass, confirming reads included, in
 *   the weight the budget still allows before the account's give-up time) falls back at once: every dead account
 *   gets a pass or a fallback, never neither.
 * - A repeated pass (one each interval while the engine stays down, its orders already cancelled) waits for weight
 *   and never falls back: the schedule is renewed meanwhile. It spends only what the window leaves above a whole
 *   pass for every live engine (`reserveEach`), the room the next death needs.
 * Same model + input + now → same result. Time is monotonic ms.
 */
import { type AccountRisk, affordPasses, orderByRisk } from "../config/weight.js";

export type DeathConfig = {
  /** the weight the passes may issue in any `windowMs` (the IP's limit less the steady spend's busiest minute) */
  budget: number;
  windowMs: number;
  /**
   * The weight kept for each live engine's death (one whole pass): a repeated pass spends only what the window
   * leaves above it, so that passes repeated each interval for the dead never eat the room of the next death.
   */
  reserveEach: number;
};

/** A pass's weight: its in-time part, and its confirming reads (issued one by one as `confirm` is asked). */
export type PassCost = { inTime: number; confirm: number };

export type Ask = {
  account: string;
  /** monotonic ms by which the whole pass must have been issued, else the switch falls back too late */
  giveUpAt: number;
  cost: PassCost;
  /** a pass after a confirmed one in the same death (repeated each interval): it waits, never falls back */
  repeat: boolean;
  /** the order of arrival, for a stable order among equals */
  seq: number;
};

export type AccountDeath = {
  down: boolean;
  /** a pass was confirmed since the engine went down: later asks are repeats */
  confirmed: boolean;
};

export type DeathModel = {
  readonly cfg: DeathConfig;
  accounts: Record<string, AccountDeath>;
  risks: Record<string, AccountRisk>;
  /** passes asked for and not yet issued */
  waiting: Ask[];
  /** issued passes whose confirming reads are still owed: account → weight owed */
  owed: Record<string, number>;
  /** confirming reads asked for (the executor waits on them): id → account and weight */
  confirms: { id: number; account: string; weight: number }[];
  /** the weight issued, with when (entries older than the window are dropped) */
  spent: { at: number; weight: number }[];
  seq: number;
};

export type DeathInput =
  | { type: "engine"; account: string; up: boolean }
  | { type: "risk"; risk: AccountRisk }
  /** a switch asks for a pass (its engine-down cancel) */
  | { type: "ask"; account: string; giveUpAt: number; cost: PassCost }
  /** a running pass answered */
  | { type: "answered"; account: string; confirmed: boolean }
  /** a running pass waits to send its confirming read (`id` names the wait) */
  | { type: "confirmAsked"; account: string; id: number; weight: number }
  /** decide (the driver gathers the inputs of one turn, then ticks; and at the wake-up asked for) */
  | { type: "tick" };

export type DeathCommand =
  /** run the account's pass now (its in-time part) */
  | { kind: "run"; account: string; weight: number; repeat: boolean }
  /** answer the account's pass with a fallback now: the switch goes to the 5 s schedule and says so */
  | { kind: "fallback"; account: string; needed: number; available: number }
  /** the account's engine is up again: its pass is answered without running (the switch ignores it) */
  | { kind: "drop"; account: string }
  /** send the confirming read `id` now (`go`), or not at all: its engine is up again */
  | { kind: "confirm"; id: number; account: string; go: boolean; weight: number };

export type DeathStep = { model: DeathModel; commands: DeathCommand[]; wakeAt: number | null };

export function initialDeath(cfg: DeathConfig): DeathModel {
  return { cfg, accounts: {}, risks: {}, waiting: [], owed: {}, confirms: [], spent: [], seq: 0 };
}

/** Unknown risk sorts after every known one (no liquidation price, notional below any). */
const riskOf = (m: DeathModel, account: string): AccountRisk =>
  m.risks[account] ?? { account, liquidationDistance: null, notional: -1 };

/** The asks in risk order (the arrival order among accounts of equal risk is the account's own, stable). */
export function riskOrder<T extends { account: string }>(m: DeathModel, asks: readonly T[]): T[] {
  const by = new Map(asks.map((a) => [a.account, a]));
  return orderByRisk(asks.map((a) => riskOf(m, a.account))).map((r) => by.get(r.account)!);
}

/** The weight issued within the window ending at `now`. */
export function spentIn(m: DeathModel, now: number): number {
  return m.spent.reduce((s, e) => (e.at > now - m.cfg.windowMs ? s + e.weight : s), 0);
}

/**
 * The least weight that can still be issued from `now` up to `until` under the rolling window: what the window
 * leaves now, and a whole budget again at each further window's start before `until`. A give-up time already passed
 * (a deadline shorter than the margin) leaves what the window leaves now: a pass the weight affords at once still
 * runs (it may well answer in time; before the gate it always ran), only one that would have to wait falls back.
 */
export function capacity(m: DeathModel, now: number, until: number): number {
  const windows = 1 + Math.floor(Math.max(0, until - now) / m.cfg.windowMs);
  return windows * m.cfg.budget - spentIn(m, now);
}

const clone = (m: DeathModel): DeathModel => ({
  ...m,
  accounts: { ...m.accounts },
  risks: { ...m.risks },
  waiting: [...m.waiting],
  owed: { ...m.owed },
  confirms: [...m.confirms],
  spent: m.spent.map((e) => ({ ...e })),
});

export function step(model: DeathModel, input: DeathInput, now: number): DeathStep {
  const m = clone(model);
  const commands: DeathCommand[] = [];
  switch (input.type) {
    case "engine": {
      const was = m.accounts[input.account];
      if (input.up) m.accounts[input.account] = { down: false, confirmed: false };
      else if (!was?.down) m.accounts[input.account] = { down: true, confirmed: false };
      return { model: m, commands, wakeAt: null };
    }
    case "risk":
      m.risks[input.risk.account] = input.risk;
      return { model: m, commands, wakeAt: null };
    case "ask": {
      // one ask per account at a time (a switch runs one pass at a time): a new one replaces the one before
      const a = m.accounts[input.account];
      m.waiting = m.waiting.filter((w) => w.account !== input.account);
      m.waiting.push({
        account: input.account,
        giveUpAt: input.giveUpAt,
        cost: input.cost,
        repeat: a?.confirmed === true,
        seq: m.seq++,
      });
      return { model: m, commands, wakeAt: null };
    }
    case "answered": {
      const a = m.accounts[input.account];
      if (input.confirmed && a?.down) m.accounts[input.account] = { ...a, confirmed: true };
      // the pass is over: confirming reads it did not ask for are not owed any more
      delete m.owed[input.account];
      return { model: m, commands, wakeAt: null };
    }
    case "confirmAsked":
      m.confirms.push({ id: input.id, account: input.account, weight: input.weight });
      return { model: m, commands, wakeAt: null };
    case "tick":
      return decide(m, now);
  }
}

function decide(m: DeathModel, now: number): DeathStep {
  const commands: DeathCommand[] = [];
  m.spent = m.spent.filter((e) => e.at > now - m.cfg.windowMs);
  const down = (account: string) => m.accounts[account]?.down === true;
  const issue = (weight: number) => {
    if (weight > 0) m.spent.push({ at: now, weight });
  };
  // 1. An engine back up: its ask is answered without a pass, its confirming reads are not sent.
  for (const a of m.waiting.filter((w) => !down(w.account)))
    commands.push({ kind: "drop", account: a.account });
  m.waiting = m.waiting.filter((w) => down(w.account));
  for (const c of m.confirms.filter((c) => !down(c.account))) {
    commands.push({ kind: "confirm", id: c.id, account: c.account, go: false, weight: 0 });
    delete m.owed[c.account];
  }
  m.confirms = m.confirms.filter((c) => down(c.account));
  // 2. First passes. Each needs its whole pass (its confirming reads included: the switch holds its pushes until
  // they answer) before its give-up time, after the confirming reads already owed: the weight that can still be
  // issued by the earliest give-up is shared out in risk order (`affordPasses`), and the others fall back now.
  const first = riskOrder(
    m,
    m.waiting.filter((w) => !w.repeat),
  );
  let left: Ask[] = [];
  if (first.length > 0) {
    const until = Math.min(...first.map((a) => a.giveUpAt));
    const owed = Object.values(m.owed).reduce((s, w) => s + w, 0);
    const available = capacity(m, now, until) - owed;
    const costs = new Map(first.map((a) => [a.account, a.cost.inTime + a.cost.confirm]));
    const { fallback } = affordPasses(
      first.map((a) => riskOf(m, a.account)),
      // a pass heavier than the whole budget can never be issued within it
      (account) => {
        const a = first.find((x) => x.account === account)!;
        return a.cost.inTime > m.cfg.budget ? Number.POSITIVE_INFINITY : costs.get(account)!;
      },
      available,
    );
    const out = new Set(fallback);
    for (const a of first)
      if (out.has(a.account))
        commands.push({
          kind: "fallback",
          account: a.account,
          needed: costs.get(a.account)!,
          available: Math.max(0, available),
        });
    // the afforded ones run in risk order while the budget allows now; the first that cannot stops the rest
    let blocked = false;
    for (const a of first.filter((x) => !out.has(x.account))) {
      if (!blocked && spentIn(m, now) + a.cost.inTime <= m.cfg.budget) {
        issue(a.cost.inTime);
        m.owed[a.account] = (m.owed[a.account] ?? 0) + a.cost.confirm;
        commands.push({ kind: "run", account: a.account, weight: a.cost.inTime, repeat: false });
      } else {
        blocked = true;
        left.push(a);
      }
    }
  }
  const kept = new Set(left.map((a) => a.account));
  m.waiting = m.waiting.filter((w) => w.repeat || kept.has(w.account));
  left = m.waiting.filter((w) => !w.repeat);
  // 4. Confirming reads, in risk order, once no first pass waits; then repeated passes. Neither is ever dropped
  // while its engine is down: each waits for weight.
  if (left.length === 0) {
    const confirms = riskOrder(m, m.confirms);
    const sent = new Set<number>();
    for (const c of confirms) {
      if (spentIn(m, now) + c.weight > m.cfg.budget) break;
      issue(c.weight);
      m.owed[c.account] = Math.max(0, (m.owed[c.account] ?? 0) - c.weight);
      sent.add(c.id);
      commands.push({ kind: "confirm", id: c.id, account: c.account, go: true, weight: c.weight });
    }
    m.confirms = m.confirms.filter((c) => !sent.has(c.id));
    if (m.confirms.length === 0) {
      const repeats = riskOrder(
        m,
        m.waiting.filter((w) => w.repeat),
      );
      const ran = new Set<string>();
      const live = Object.values(m.accounts).filter((x) => !x.down).length;
      const room = m.cfg.budget - live * m.cfg.reserveEach;
      for (const a of repeats) {
        if (spentIn(m, now) + a.cost.inTime > room) break;
        issue(a.cost.inTime);
        m.owed[a.account] = (m.owed[a.account] ?? 0) + a.cost.confirm;
        ran.add(a.account);
        commands.push({ kind: "run", account: a.account, weight: a.cost.inTime, repeat: true });
      }
      m.waiting = m.waiting.filter((w) => !ran.has(w.account));
    }
  }
  // 5. Anything still waiting is decided again when the oldest weight leaves the window.
  const pending = m.waiting.length > 0 || m.confirms.length > 0;
  const oldest = m.spent.length > 0 ? Math.min(...m.spent.map((e) => e.at)) : null;
  const giveUp =
    left.length > 0 ? Math.min(...m.waiting.filter((w) => !w.repeat).map((w) => w.giveUpAt)) : null;
  const wakes = [oldest === null ? null : oldest + m.cfg.windowMs, giveUp].filter(
    (t): t is number => t !== null && Number.isFinite(t) && t > now,
  );
  const wakeAt = pending && wakes.length > 0 ? Math.min(...wakes) : null;
  return { model: m, commands, wakeAt };
}
