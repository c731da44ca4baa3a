/**
 * What the switches follow once built (src/app/parts/switches.ts): the replicas' election, the engine guard (and
 * the gate of a simultaneous death beside it), the agent watches, the exposure poll's figures for the escalating
 * accounts, and the clock watch's steps. Each reaches only the switches it concerns, in the same turn.
 */
import { riskOf } from "../../config/weight.js";
import type { EventBus } from "../../core/events.js";
import type { DeathGate } from "../../fleet-death/gate.js";
import { nearestLiquidationPct, parseExposureLine } from "../../protocol/hyperliquid/exposure-line.js";
import type { Switch } from "../../switch/index.js";
import type { AgentFeeds, Board, Engine, Feed } from "../context.js";
import type { Coordination } from "./coordination.js";

export function followInputs(
  switches: readonly Switch[],
  {
    bus,
    escalating,
    ...ctx
  }: {
    bus: EventBus;
    /** the accounts whose escalation rules read the exposure poll's figures */
    escalating: ReadonlySet<string>;
    coordination: Coordination | null;
    deathGate: DeathGate | undefined;
    engine: Feed<Engine> & { now(account: string): Engine };
    agents: AgentFeeds;
    clockSteps: Feed<number>;
    board: Board;
  },
): void {
  // The replicas' election (coordination.ts) reaches every switch: the machine gates on it.
  const coordination = ctx.coordination;
  if (coordination) {
    const c = coordination;
    for (const s of switches) s.dispatch({ type: "coordination", ...c.now() });
    c.subscribe((state) => {
      for (const s of switches) s.dispatch({ type: "coordination", ...state });
    });
    ctx.board.coordination.publish(() => c.status());
  }
  const byAccount = new Map(switches.map((s) => [s.account, s]));
  // The passes of a simultaneous death (src/fleet-death/): the gate hears every engine change, each account's
  // deadline and risk, before the switches ask it for their passes.
  const gate = ctx.deathGate;
  if (gate) {
    gate.attach((account) => byAccount.get(account)?.protection().armedUntil ?? null);
    for (const s of switches) gate.engine(s.account, ctx.engine.now(s.account).up);
    ctx.engine.subscribe(({ up, accounts }) => {
      for (const s of switches) if (!accounts || accounts.includes(s.account)) gate.engine(s.account, up);
    });
    bus.subscribe((e) => {
      const line = parseExposureLine(e);
      if (line?.dex !== "" || !byAccount.has(line.account)) return;
      const risk = riskOf(line);
      if (risk) gate.risk(risk);
    });
  }
  for (const s of switches) {
    const engine = ctx.engine.now(s.account);
    if (!engine.up) s.dispatch({ type: "engine", up: false, detail: engine.detail, cause: engine.cause });
  }
  // A change for named accounts (the connection guard) reaches only their switches, in the same turn.
  ctx.engine.subscribe(({ up, detail, cause, accounts }) => {
    for (const s of switches)
      if (!accounts || accounts.includes(s.account)) s.dispatch({ type: "engine", up, detail, cause });
  });
  // An agent key's state reaches the switches it signs for, and only those.
  for (const { accounts, feed: agent } of ctx.agents) {
    const mine = switches.filter((s) => accounts.includes(s.account));
    const now = agent.now();
    if (now) for (const s of mine) s.dispatch({ type: "agent", state: now.state, detail: now.detail });
    agent.subscribe((a) => {
      for (const s of mine) s.dispatch({ type: "agent", state: a.state, detail: a.detail });
    });
  }
  // The exposure poll's figures reach the escalating accounts' switches (their rules read them): the first
  // perp dex's account value and total notional, and the nearest liquidation across every dex polled.
  if (escalating.size > 0) {
    const nearest = new Map<string, Map<string, number | null>>();
    bus.subscribe((e) => {
      const line = parseExposureLine(e);
      if (!line) return;
      const s = byAccount.get(line.account);
      if (!s || !escalating.has(s.account)) return;
      const byDex = nearest.get(s.account) ?? new Map<string, number | null>();
      byDex.set(line.dex, nearestLiquidationPct(line.positions));
      nearest.set(s.account, byDex);
      if (line.dex !== "") return;
      const all = [...byDex.values()].filter((d): d is number => d !== null);
      const { accountValue, totalNtlPos: notionalUsd } = line;
      if (accountValue === null || notionalUsd === null) return;
      s.dispatch({
        type: "exposure",
        accountValue,
        notionalUsd,
        minLiquidationPct: all.length > 0 ? Math.min(...all) : null,
      });
    });
  }
  ctx.clockSteps.subscribe((deltaMs) => {
    for (const s of switches) s.dispatch({ type: "clockStep", deltaMs });
  });
}
