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
 * - Closes leave only while the engine is down, checked before every order (`closeHold`): its return stops a pass
 *   at its next step and drops a due retry; the closes are held (said and paged) and resume only when it is down
 *   again and a rule holds. The operator's kill is the exception: its command is its evidence.
 * - Every pass is written ahead in the ledger (`halted.closing`), so a restart reports a pass left open ("closing
 *   stopped at restart") and resumes it only on this run's evidence (`escalationStart`).
 */
import type { EngineDownCause } from "../core/events.js";
import type { SwitchEvent } from "../core/switch-events.js";
import { andThen, type Decision, merge } from "./context.js";
import { gateRefusal, gateToken, heldOnce } from "./coordination.js";
import {
  CLOSE_REPORTS_KEPT,
  type EscalationConfig,
  type EscalationModel,
  STOPPED_AT_RESTART,
} from "./escalation-model.js";
import type { ClosePass, Event, Now, SwitchModel } from "./model.js";

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

/** Why the closes stop when the engine comes back (the executor's answer and `escalation.held` say it). */
export const ENGINE_BACK =
  "the engine is back: no close order leaves while it is up; the closes resume only when it is down again and a rule holds";

/**
 * Whether a close order may leave now: null when it may, else why not. Pure, on the model as it is now: the close
 * executor asks before EVERY order it sends (close-executor.ts `mayProceed`, through the driver), so a pass in
 * flight stops at its next step once the engine is back, the account released or the daemon stopping. The
 * operator's `kill --close` is its own evidence: the engine's presence does not stop it.
 */
export function closeHold(m: SwitchModel): string | null {
  if (m.phase.name !== "running") return "the daemon is stopping: the pass stays open in the ledger";
  if (m.entry.halted === undefined) return "the account is no longer HALTED";
  if (m.esc.closing !== "waiting") return "no close pass is open";
  if (m.engineUp && !m.esc.killPass) return ENGINE_BACK;
  return gateRefusal(m);
}

/**
 * The closes stop until the engine is down again and a rule holds: said (and paged) with why. Decided from `esc`
 * (the ladder as the step has it so far).
 */
function held(m: SwitchModel, esc: EscalationModel, why: string): Decision {
  return {
    set: { esc: { ...esc, closing: "held", heldWhy: why, killPass: false } },
    wake: { escalate: null },
    events: [
      {
        type: "escalationHeld",
        rule: "halted",
        reason: why,
        gate: `HALTED (${m.entry.halted?.reason ?? ""}); closes resume when the engine is down again and a rule holds, and only \`hl-deadman reset\` releases the account${esc.remaining ? `; positions left at the last read: ${esc.remaining}` : ""}`,
      },
    ],
  };
}

/**
 * The engine's state changed: what the ladder decides (its engine-down clock, a retry held while the engine is
 * up, closes that resume on a new death), applied by the step with the engine-down policy's (machine.ts).
 */
export function escalationEngine(
  m: SwitchModel,
  now: Now,
  up: boolean,
  cause: EngineDownCause = "seen",
): Decision {
  const esc = m.esc;
  const halted = m.entry.halted !== undefined;
  if (up) {
    const upEsc: EscalationModel = { ...esc, downSinceMono: null, downCause: null, baseline: null };
    // No retry fires while the engine is up; a pass out stops at its next order (closeHold) and is held when it
    // answers (escalationClosed). An operator's kill pass goes on: the command is its evidence.
    if (halted && esc.closing === "retry") return held(m, upEsc, ENGINE_BACK);
    return {
      set: { esc: upEsc },
      wake: { escalate: null },
      events:
        halted && esc.closing === "waiting" && !esc.killPass
          ? [
              {
                type: "escalationHeld",
                rule: "halted",
                reason: ENGINE_BACK,
                gate: "the pass out stops before its next order",
              },
            ]
          : [],
    };
  }
  let downEsc: EscalationModel = {
    ...esc,
    downSinceMono: now.mono,
    downCause: cause,
    baseline: esc.exposure?.accountValue ?? null,
  };
  // A latched account whose closes were done may have been traded again while the engine was up: its closes
  // resume on this death as on the first, when a rule holds.
  if (halted && esc.closing === "done")
    downEsc = {
      ...downEsc,
      closing: "held",
      heldWhy: "the engine came back after the positions were closed",
    };
  const cfg = m.cfg.escalation;
  const clock =
    cfg?.afterDownMs != null && (!halted || downEsc.closing === "held" || downEsc.closing === "idle")
      ? { wake: { escalate: now.mono + cfg.afterDownMs } }
      : {};
  return { set: { esc: downEsc }, ...clock };
}

/**
 * At start: a latch whose pass was open when the daemon stopped (written ahead, escalationCheck) is neither
 * forgotten nor taken as evidence. It is said at once ("closing stopped at restart", with the positions the last
 * read left) and held: it resumes when the engine is down (as this run sees it) and a rule holds. Decided, not
 * applied (context.ts `Decision`).
 */
export function escalationStart(m: SwitchModel): Decision {
  const h = m.entry.halted;
  if (h === undefined) return {};
  const remaining = h.remaining ?? "";
  if (h.closing === "done")
    return { set: { esc: { ...m.esc, closing: "done", passes: h.pass ?? 0, remaining } } };
  // (a ledger written before the pass state was kept says nothing of it: taken as open)
  const esc: EscalationModel = {
    ...m.esc,
    closing: "held",
    passes: h.pass ?? 0,
    heldWhy: STOPPED_AT_RESTART,
    remaining,
  };
  // the guard may have said the engine is down before the start: the time rule counts from then
  const after = m.cfg.escalation?.afterDownMs;
  return {
    set: { esc },
    ...(esc.downSinceMono !== null && after != null ? { wake: { escalate: esc.downSinceMono + after } } : {}),
    events: [
      {
        type: "closeStoppedAtRestart",
        pass: h.pass ?? 0,
        since: h.since,
        reason: h.reason,
        remaining,
      },
    ],
  };
}

/**
 * The exposure poll's figures for this account, kept for the rules (decided, not applied: the step then checks
 * the rules, `escalationCheck`).
 */
export function escalationExposure(m: SwitchModel, ev: Extract<Event, { type: "exposure" }>): Decision {
  // The engine went down before any poll (a restart, an engine that never connected): the level "when the engine
  // went down" is unknown, and without one the drawdown rule could never hold for the whole outage. The first
  // figure after its death is the nearest known level.
  const baseline = m.esc.downSinceMono !== null && m.esc.baseline === null ? ev.accountValue : m.esc.baseline;
  return {
    set: {
      esc: {
        ...m.esc,
        baseline,
        exposure: {
          accountValue: ev.accountValue,
          notionalUsd: ev.notionalUsd,
          minLiquidationPct: ev.minLiquidationPct,
        },
      },
    },
  };
}

/**
 * Whether step 2 starts now (a rule holds and the account is not latched yet), or a latched account's close is due
 * again. Checked on every tick, wake-up and exposure poll while running. Decided, not applied (context.ts
 * `Decision`).
 */
export function escalationCheck(m: SwitchModel, now: Now): Decision {
  const cfg = m.cfg.escalation;
  if (!cfg || m.phase.name !== "running") return {};
  const halted = m.entry.halted !== undefined;
  // latched: only held closes resume (the engine down again, a rule holding), or a kill's latch without a pass
  // yet (`idle`) starts them; a pass out or due is not doubled, and a finished one waits for the next death
  if (halted && m.esc.closing !== "held" && m.esc.closing !== "idle") return {};
  if (m.engineUp) return {};
  const hit = escalationRule(cfg, m.esc, now.mono);
  if (!hit) return {};
  if (halted) {
    const resumed: Decision = {
      events: [
        {
          type: "escalationResumed",
          rule: hit.rule,
          reason: hit.reason,
          pass: m.esc.passes + 1,
          held: m.esc.heldWhy ?? "",
        },
      ],
    };
    return merge(resumed, closeNow(m, now));
  }
  // Closing is not safe twice: with two replicas only the lease holder closes (coordination.ts). The other one
  // says so once and latches nothing; it closes if it wins the lease while the rule still holds.
  const gate = gateRefusal(m);
  if (gate !== null)
    return heldOnce(m, gate, { type: "escalationHeld", rule: hit.rule, reason: hit.reason, gate });
  // The latch goes to disk before the first close order leaves: a restart finds the account HALTED.
  const latch: Decision = {
    set: {
      entry: { ...m.entry, halted: { since: Math.floor(now.wall), reason: hit.reason } },
      esc: { ...m.esc, passes: 0, remaining: "" },
    },
    events: [{ type: "escalated", rule: hit.rule, reason: hit.reason, ...tokenOf(m) }],
  };
  return andThen(m, latch, (latched) => closeNow(latched, now));
}

/** The escalation's wake-up is due: the time rule, or a latched account's close pass to try again (decided). */
export function escalationDue(m: SwitchModel, now: Now): Decision {
  if (m.entry.halted === undefined || m.esc.closing === "held" || m.esc.closing === "idle")
    return escalationCheck(m, now);
  if (m.esc.closing === "retry" && m.phase.name === "running" && m.cfg.escalation && !m.engineUp)
    return closeNow(m, now);
  return {};
}

const tokenOf = (m: SwitchModel): { token?: string } => {
  const token = gateToken(m);
  return token === undefined ? {} : { token };
};

/** A close pass of the escalation's own, asked of the driver when it opens. */
function closeNow(m: SwitchModel, now: Now): Decision {
  const { decision, pass } = closePass(m, now);
  return pass === null ? decision : merge(decision, { effects: [{ kind: "closePositions", ...pass }] });
}

/** Opens the next close pass (written ahead with the latch), or holds it: the decision, and the pass it opens. */
function closePass(m: SwitchModel, now: Now, kill = false): { decision: Decision; pass: ClosePass | null } {
  if (m.engineUp && !kill) return { decision: held(m, m.esc, ENGINE_BACK), pass: null };
  // A latched account whose lease went to another replica: its pass waits (the holder closes on its own rules).
  const gate = gateRefusal(m);
  if (gate !== null) {
    const said = heldOnce(m, gate, {
      type: "escalationHeld",
      rule: "halted",
      reason: m.entry.halted?.reason ?? "",
      gate,
    });
    const retry: Decision = {
      set: { esc: { ...m.esc, closing: "retry" } },
      wake: { escalate: now.mono + (m.cfg.escalation?.retryMs ?? 30_000) },
    };
    return { decision: merge(said, retry), pass: null };
  }
  const passes = m.esc.passes + 1;
  // The pass is written ahead, with the latch: a restart finds it open (escalationStart) and resumes or reports
  // it. No close order leaves before the write is durable (within the budget: driver.ts).
  const halted = m.entry.halted!;
  return {
    decision: {
      set: {
        coord: { ...m.coord, held: null, passToken: gateToken(m) ?? null },
        esc: { ...m.esc, closing: "waiting", passes, killPass: kill, heldWhy: null },
        entry: { ...m.entry, halted: { ...halted, closing: "open", pass: passes } },
      },
      wake: { escalate: null },
      sync: true,
    },
    pass: { reason: halted.reason, pass: passes },
  };
}

/**
 * A close pass answered: the pass's end on disk, then done, held (the engine back, the daemon stopping, an account
 * not opted in) or tried again after `retryMs`. Decided, not applied (context.ts `Decision`).
 */
export function escalationClosed(
  m: SwitchModel,
  now: Now,
  ev: Extract<Event, { type: "closeResult" }>,
): Decision {
  if (m.esc.closing !== "waiting") return {};
  const cfg = m.cfg.escalation;
  const fields = { pass: m.esc.passes, orders: ev.orders, filledUsd: ev.filledUsd, flat: ev.flat };
  const reports = (ev.reports ?? []).slice(0, CLOSE_REPORTS_KEPT);
  const token = m.coord.passToken;
  const said: SwitchEvent[] =
    reports.length > 0
      ? [{ type: "closeOrders", pass: m.esc.passes, orders: reports, ...(token !== null ? { token } : {}) }]
      : [];
  const remaining = ev.flat ? "" : (ev.remaining ?? m.esc.remaining);
  const halted = m.entry.halted;
  // the pass's end on disk: done, or open with what is left
  const latch: Decision =
    halted !== undefined
      ? {
          set: {
            entry: {
              ...m.entry,
              halted: { ...halted, closing: ev.flat ? "done" : "open", remaining: remaining.slice(0, 500) },
            },
          },
          persist: true,
        }
      : {};
  const esc: EscalationModel = { ...m.esc, remaining, killPass: false };
  const then = (d: Decision): Decision => ({
    ...d,
    ...latch,
    set: { ...latch.set, ...d.set },
    events: [...said, ...(d.events ?? [])],
  });
  if (ev.flat)
    return then({
      set: { esc: { ...esc, closing: "done" } },
      events: [{ type: "closeDone", ...fields, dust: ev.dust }],
    });
  const incomplete = (retryInMs: number | null): SwitchEvent => ({
    type: "closeIncomplete",
    ...fields,
    refusal: ev.refusal,
    detail: ev.detail ?? null,
    retryInMs,
  });
  const heldAfter = (why: string): Decision => {
    const h = held(m, esc, why);
    return then({ ...h, events: [incomplete(null), ...(h.events ?? [])] });
  };
  // The engine back (or the daemon stopping): no retry fires; held until the engine is down again and a rule holds.
  if (m.engineUp || m.phase.name !== "running") {
    if (m.phase.name === "running")
      return heldAfter(ev.refusal === "held" && ev.detail ? ev.detail : ENGINE_BACK);
    return then({
      set: { esc: { ...esc, closing: "held", heldWhy: STOPPED_AT_RESTART } },
      events: [incomplete(null)],
    });
  }
  // A kill's pass on an account not opted in: no rule of the escalation goes on with it.
  if (!cfg)
    return heldAfter(
      "the account is not opted in to the escalation: no further pass runs on its own; `hl-deadman kill --close` again",
    );
  return then({
    set: { esc: { ...esc, closing: "retry" } },
    wake: { escalate: now.mono + cfg.retryMs },
    events: [incomplete(cfg.retryMs)],
  });
}

/**
 * The operator's `reset`: releases the latch (on disk), and says who and what was released; or refuses, saying
 * why. Decided, not applied (context.ts `Decision`).
 */
export function escalationReset(m: SwitchModel, now: Now, ev: Extract<Event, { type: "reset" }>): Decision {
  const refused = (reason: string): Decision => ({ events: [{ type: "resetRefused", by: ev.by, reason }] });
  const halted = m.entry.halted;
  // A reset carried out by two replicas at once is not the operator's one decision: only the lease holder.
  const gate = gateRefusal(m);
  if (gate !== null) return refused(gate);
  if (halted === undefined) return refused("the account is not HALTED");
  if (m.esc.closing === "waiting") return refused("a close pass is running; try again when it has answered");
  const { halted: _released, ...entry } = m.entry;
  let esc: EscalationModel = {
    ...m.esc,
    closing: "idle",
    passes: 0,
    killPass: false,
    heldWhy: null,
    remaining: "",
  };
  let escalate: number | null = null;
  // Still down: the time rule counts from the reset, not from the engine's death (else it would latch again at once).
  if (esc.downSinceMono !== null) {
    esc = { ...esc, downSinceMono: now.mono };
    const after = m.cfg.escalation?.afterDownMs;
    if (after != null) escalate = now.mono + after;
  }
  const token = gateToken(m);
  return {
    set: { entry, esc },
    persist: true,
    wake: { escalate },
    events: [
      {
        type: "haltReleased",
        by: ev.by,
        since: halted.since,
        reason: halted.reason,
        ...(token === undefined ? {} : { token }),
      },
    ],
  };
}

/**
 * The operator's kill switch (`hl-deadman kill`): the command is the evidence, so no rule need hold and the
 * engine's presence does not stop it. It latches the account HALTED (on disk before anything leaves), asks the
 * driver to cancel every resting order at once and, with `close`, runs one close pass of its own (reduce-only, as
 * the escalation's). Later passes, if it does not finish, follow the escalation's rules (only while the engine is
 * down and a rule holds). Only `reset` releases the latch.
 */
export function escalationKill(m: SwitchModel, now: Now, ev: Extract<Event, { type: "kill" }>): Decision {
  const refuse = (reason: string): Decision => ({ events: [{ type: "killRefused", by: ev.by, reason }] });
  if (m.phase.name !== "running") return refuse("the daemon is stopping");
  // Two replicas killing at once is not the operator's one decision: only the lease holder acts.
  const gate = gateRefusal(m);
  if (gate !== null) return refuse(gate);
  const reason = `the operator's kill (${ev.by})`;
  const latched = m.entry.halted !== undefined;
  const latch: Decision = latched
    ? {}
    : {
        set: {
          entry: { ...m.entry, halted: { since: Math.floor(now.wall), reason: reason.slice(0, 500) } },
          esc: { ...m.esc, passes: 0, remaining: "" },
        },
        sync: true,
      };
  return andThen(m, latch, (k) => {
    // A close pass already out is the kill's close: it is not doubled.
    const close = ev.close && k.esc.closing !== "waiting";
    const said: Decision = {
      events: [
        {
          type: "killed",
          by: ev.by,
          close: ev.close,
          latched: !latched,
          ...(ev.close && !close ? { detail: "a close pass is already out: it is the kill's close" } : {}),
          ...tokenOf(k),
        },
      ],
    };
    // the kill's close, if it opens, leaves after the kill's cancels
    const { decision, pass } = close ? closePass(k, now, true) : { decision: {}, pass: null };
    const kill: Decision = {
      effects: [{ kind: "kill", by: ev.by, ...(pass !== null ? { close: pass } : {}) }],
    };
    return merge(merge(said, decision), kill);
  });
}
