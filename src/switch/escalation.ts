/**
 * The escalation ladder, a sub-reducer of the switch machine (docs/operations.md, "When cancelling is not
 * enough"). Opt-in per account, on top of the engine-down policy `cancel`:
 * - step 1 is the cancel path (engine-down.ts): the engine's orders are cancelled at once;
 * - step 2 closes the account's positions with reduce-only IOC orders, when the engine has stayed down for
 *   `afterDownMs`, or while it is down a rule over the exposure poll holds: the distance to liquidation below
 *   `liquidationPct`, the account value down `drawdownPct` from its level when the engine went down, or the total
 *   notional above `notionalCapUsd`.
 * Rules, and why:
 * - Only while the engine is down. A live engine manages its own risk; closing under it would fight it.
 * - An engine ABSENT (an account an engine held, and no engine named it within the connect grace after a restart:
 *   cause `absent`) is weaker evidence than a death seen: it may be slow to come back. Its absence alone starts no
 *   close: the exposure rules (liquidation, drawdown, notional) need a death seen, and the time rule counts the
 *   engine absent for `afterDownMs` from the grace's end (the operator's own bound on how long nobody may manage
 *   the positions; without it, absence never closes). docs/operations.md, "Cancel on disconnect".
 * - Once a close starts, the account is latched HALTED, on disk before the first close order leaves (a restart
 *   keeps it), and only an operator's `reset` releases it. HALTED never stops the pushes: the switch keeps the
 *   schedule armed, as the backstop should the daemon die too.
 * - A close pass that does not finish (the post-only window after a network upgrade, an exchange refusal, no
 *   answer) is said at once and tried again after `retryMs`; it is never turned into another kind of order.
 * - Passes go on while HALTED until one reports the account flat (or only dust below the $10 minimum).
 */
import type { EngineDownCause } from "../core/events.js";
import type { Ctx } from "./context.js";
import { gateRefusal, gateToken, heldOnce } from "./coordination.js";
import { CLOSE_REPORTS_KEPT, type EscalationConfig, type EscalationModel } from "./escalation-model.js";
import type { Event } from "./model.js";

export type { EscalationConfig, EscalationModel, ExposureFigures } from "./escalation-model.js";

const pct = (x: number) => `${Number(x.toFixed(2))} %`;

/**
 * Which step-2 rule holds now, as a reason for people, or null. Pure: the figures of the last poll, the engine's
 * down time and the configuration.
 */
export function escalationRule(
  cfg: EscalationConfig,
  esc: EscalationModel,
  nowMono: number,
): { rule: "engine_down" | "liquidation" | "drawdown" | "notional"; reason: string } | null {
  if (esc.downSinceMono === null) return null;
  const downMs = nowMono - esc.downSinceMono;
  const absent = esc.downCause === "absent";
  if (cfg.afterDownMs !== null && downMs >= cfg.afterDownMs)
    return {
      rule: "engine_down",
      reason: absent
        ? `no engine has named the account for ${Math.round(downMs / 1000)} s after the connect grace (limit ${Math.round(cfg.afterDownMs / 1000)} s)`
        : `the engine has been down for ${Math.round(downMs / 1000)} s (limit ${Math.round(cfg.afterDownMs / 1000)} s)`,
    };
  // absence alone never closes on the exposure: only the time rule above
  if (absent) return null;
  const x = esc.exposure;
  if (x === null) return null;
  if (cfg.liquidationPct !== null && x.minLiquidationPct !== null && x.minLiquidationPct < cfg.liquidationPct)
    return {
      rule: "liquidation",
      reason: `a position is ${pct(x.minLiquidationPct)} from liquidation (limit ${pct(cfg.liquidationPct)})`,
    };
  if (cfg.drawdownPct !== null && esc.baseline !== null && esc.baseline > 0) {
    const down = ((esc.baseline - x.accountValue) / esc.baseline) * 100;
    if (down >= cfg.drawdownPct)
      return {
        rule: "drawdown",
        reason: `the account value is down ${pct(down)} from ${esc.baseline} USD when the engine went down (limit ${pct(cfg.drawdownPct)})`,
      };
  }
  if (cfg.notionalCapUsd !== null && x.notionalUsd > cfg.notionalCapUsd)
    return {
      rule: "notional",
      reason: `the total notional is ${Math.round(x.notionalUsd)} USD (cap ${cfg.notionalCapUsd} USD)`,
    };
  return null;
}

/** The engine's state changed (called by engine-down.ts's `engine`). */
export function escalationEngine(ctx: Ctx, up: boolean, cause: EngineDownCause = "seen") {
  const { m } = ctx;
  const esc = m.esc;
  if (up) {
    m.esc = { ...esc, downSinceMono: null, downCause: null, baseline: null };
    m.wake.escalate = m.esc.closing === "retry" ? m.wake.escalate : null;
    return;
  }
  m.esc = {
    ...esc,
    downSinceMono: ctx.now.mono,
    downCause: cause,
    baseline: esc.exposure?.accountValue ?? null,
  };
  const cfg = m.cfg.escalation;
  if (cfg?.afterDownMs != null && m.entry.halted === undefined)
    m.wake.escalate = ctx.now.mono + cfg.afterDownMs;
}

/** The exposure poll's figures for this account. */
export function escalationExposure(ctx: Ctx, ev: Extract<Event, { type: "exposure" }>) {
  const { m } = ctx;
  // The engine went down before any poll (a restart, an engine that never connected): the level "when the engine
  // went down" is unknown, and without one the drawdown rule could never hold for the whole outage. The first
  // figure after its death is the nearest known level.
  const baseline = m.esc.downSinceMono !== null && m.esc.baseline === null ? ev.accountValue : m.esc.baseline;
  m.esc = {
    ...m.esc,
    baseline,
    exposure: {
      accountValue: ev.accountValue,
      notionalUsd: ev.notionalUsd,
      minLiquidationPct: ev.minLiquidationPct,
    },
  };
  escalationCheck(ctx);
}

/**
 * Whether step 2 starts now (a rule holds and the account is not latched yet), or a latched account's close is due
 * again. Called on every tick, wake-up and exposure poll while running.
 */
export function escalationCheck(ctx: Ctx) {
  const { m } = ctx;
  const cfg = m.cfg.escalation;
  if (!cfg || m.phase !== "running") return;
  if (m.entry.halted !== undefined) return;
  const hit = escalationRule(cfg, m.esc, ctx.now.mono);
  if (!hit) return;
  // Closing is not safe twice: with two replicas only the lease holder closes (coordination.ts). The other one
  // says so once and latches nothing; it closes if it wins the lease while the rule still holds.
  const gate = gateRefusal(m);
  if (gate !== null) {
    if (heldOnce(ctx, gate)) ctx.emit({ type: "escalationHeld", rule: hit.rule, reason: hit.reason, gate });
    return;
  }
  // The latch goes to disk before the first close order leaves: a restart finds the account HALTED.
  m.entry = { ...m.entry, halted: { since: Math.floor(ctx.now.wall), reason: hit.reason } };
  ctx.persist = true;
  ctx.ready.mustSync = true;
  ctx.ready.syncBudgetMs = m.cfg.requestTimeoutMs;
  m.esc = { ...m.esc, passes: 0 };
  ctx.emit({ type: "escalated", rule: hit.rule, reason: hit.reason, ...tokenOf(ctx) });
  closePass(ctx);
}

/** The escalation's wake-up is due: the time rule, or a latched account's close pass to try again. */
export function escalationDue(ctx: Ctx) {
  const { m } = ctx;
  if (m.entry.halted === undefined) return escalationCheck(ctx);
  if (m.esc.closing === "retry" && m.phase === "running" && m.cfg.escalation) closePass(ctx);
}

const tokenOf = (ctx: Ctx): { token?: string } => {
  const token = gateToken(ctx.m);
  return token === undefined ? {} : { token };
};

function closePass(ctx: Ctx) {
  const { m } = ctx;
  // A latched account whose lease went to another replica: its pass waits (the holder closes on its own rules).
  const gate = gateRefusal(m);
  if (gate !== null) {
    if (heldOnce(ctx, gate))
      ctx.emit({ type: "escalationHeld", rule: "halted", reason: m.entry.halted?.reason ?? "", gate });
    m.esc = { ...m.esc, closing: "retry" };
    m.wake.escalate = ctx.now.mono + (m.cfg.escalation?.retryMs ?? 30_000);
    return;
  }
  m.coord = { ...m.coord, held: null, passToken: gateToken(m) ?? null };
  m.esc = { ...m.esc, closing: "waiting", passes: m.esc.passes + 1 };
  m.wake.escalate = null;
  ctx.ready.closePositions = { reason: m.entry.halted?.reason ?? "", pass: m.esc.passes };
}

/** A close pass answered. */
export function escalationClosed(ctx: Ctx, ev: Extract<Event, { type: "closeResult" }>) {
  const { m } = ctx;
  if (m.esc.closing !== "waiting") return;
  const cfg = m.cfg.escalation;
  const fields = { pass: m.esc.passes, orders: ev.orders, filledUsd: ev.filledUsd, flat: ev.flat };
  const reports = (ev.reports ?? []).slice(0, CLOSE_REPORTS_KEPT);
  const token = m.coord.passToken;
  if (reports.length > 0)
    ctx.emit({
      type: "closeOrders",
      pass: m.esc.passes,
      orders: reports,
      ...(token !== null ? { token } : {}),
    });
  if (ev.flat) {
    m.esc = { ...m.esc, closing: "idle" };
    ctx.emit({ type: "closeDone", ...fields, dust: ev.dust });
    return;
  }
  const retryMs = cfg?.retryMs ?? 30_000;
  m.esc = { ...m.esc, closing: "retry" };
  m.wake.escalate = ctx.now.mono + retryMs;
  ctx.emit({
    type: "closeIncomplete",
    ...fields,
    refusal: ev.refusal,
    detail: ev.detail ?? null,
    retryInMs: retryMs,
  });
}

/** The operator's `reset`: releases the latch (on disk), and says who and what was released. */
export function escalationReset(ctx: Ctx, ev: Extract<Event, { type: "reset" }>) {
  const { m } = ctx;
  const halted = m.entry.halted;
  // A reset carried out by two replicas at once is not the operator's one decision: only the lease holder.
  const gate = gateRefusal(m);
  if (gate !== null) {
    ctx.emit({ type: "resetRefused", by: ev.by, reason: gate });
    return;
  }
  if (halted === undefined) {
    ctx.emit({ type: "resetRefused", by: ev.by, reason: "the account is not HALTED" });
    return;
  }
  if (m.esc.closing === "waiting") {
    ctx.emit({
      type: "resetRefused",
      by: ev.by,
      reason: "a close pass is running; try again when it has answered",
    });
    return;
  }
  const { halted: _released, ...entry } = m.entry;
  m.entry = entry;
  ctx.persist = true;
  m.esc = { ...m.esc, closing: "idle", passes: 0 };
  m.wake.escalate = null;
  // Still down: the time rule counts from the reset, not from the engine's death (else it would latch again at once).
  if (m.esc.downSinceMono !== null) {
    m.esc = { ...m.esc, downSinceMono: ctx.now.mono };
    const after = m.cfg.escalation?.afterDownMs;
    if (after != null) m.wake.escalate = ctx.now.mono + after;
  }
  ctx.emit({ type: "haltReleased", by: ev.by, since: halted.since, reason: halted.reason, ...tokenOf(ctx) });
}
