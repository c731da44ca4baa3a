/** The escalation's step-2 rules (machine.ts applies them): which one holds, as a reason for people. */
import type { EscalationConfig } from "../core/feature.js";
import type { EscalationModel } from "./model.js";

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
