/**
 * The daemon's gate on the engine-down passes of a simultaneous death (src/fleet-death/): its budget from the
 * weight plan, each pass's weight from what is known of the account's orders, and its log line. Under a policy other
 * than `cancel`, or with a canceller given by the caller, there is none; nor where the steady spend alone is over the
 * IP's weight (let through, with a warning, only against another API host): there is no budget to share, so the
 * passes go out directly, as before the gate, rather than queue behind a minute's window (a queued repeat pass
 * held the escalation's close).
 */
import type { Config } from "../../config/options.js";
import { IP_WEIGHT_PER_MINUTE, PASS_WEIGHT, passWeight, weightPlan } from "../../config/weight.js";
import { monotonicOf } from "../../core/clock.js";
import type { Logger } from "../../core/logger.js";
import type { Runtime } from "../../core/runtime.js";
import { createDeathGate, type DeathGate } from "../../fleet-death/gate.js";
import type { DeathCommand } from "../../fleet-death/machine.js";
import type { CancelOpenOrders } from "../../protocol/hyperliquid/cancel.js";
import { EXPEDITE_LEAD_MS } from "../../switch/model.js";

/** The rolling window of the IP's weight (Hyperliquid docs, "Rate limits and user limits": per minute). */
export const DEATH_WINDOW_MS = 60_000;
/** Accounts named in a decision's log line, at most. */
const NAMED = 20;

export function buildDeathGate({
  config,
  runtime,
  now,
  plan,
  dexes,
  knows,
  canceller,
  logger,
}: {
  config: Config;
  runtime: Runtime;
  /** the exchange's time (epoch ms) */
  now: () => number;
  plan: readonly { account: string; vaultAddress: string | undefined }[];
  /** the dexes a pass covers ("" the first perp dex) */
  dexes: readonly string[];
  /** whether a pass for `user` knows its orders now (the order feed's fresh list, the engine's announcement) */
  knows: (user: string) => boolean;
  /** the canceller the gate's passes run (the executor built with the gate's `beforeConfirm`) */
  canceller: () => CancelOpenOrders;
  logger: Logger;
}): DeathGate | undefined {
  const steady = weightPlan(config, plan.length);
  if (!steady.fits) return undefined;
  const users = new Map(plan.map((p) => [(p.vaultAddress ?? p.account).toLowerCase(), p.account]));
  const vaults = new Map(plan.map((p) => [p.account, p.vaultAddress ?? p.account]));
  const builders = Math.max(0, new Set(["", ...dexes]).size - 1);
  // The steady spend's busiest minute is the IP's already; the rest is the death's. Never below one whole pass:
  // a plan without room was refused or warned about, and its passes still go one at a time, as before.
  const budget = Math.max(
    Math.floor(IP_WEIGHT_PER_MINUTE - steady.peakPerMinute),
    passWeight(false) * (1 + builders),
  );
  // A confirming read is charged with the push that renews the schedule once it confirms the pass: that push is not
  // issued through the gate, and every account's comes in the minute of its confirm, beyond the steady rate.
  const confirmWeight = PASS_WEIGHT.confirm + PASS_WEIGHT.renewal;
  const log = logger.child({ module: "fleet-death" });
  const said = (commands: readonly DeathCommand[]) => {
    const ran = commands.filter((c) => c.kind === "run" && !c.repeat).map((c) => c.account);
    const fellBack = commands.filter((c) => c.kind === "fallback").map((c) => c.account);
    // one line per decision of a death with more than one pass, or any fallback (each switch also says its own)
    if (ran.length + fellBack.length < 2 && fellBack.length === 0) return;
    log.info(
      {
        event: "engine.passes_ordered",
        ran: ran.length,
        fellBack: fellBack.length,
        order: ran.slice(0, NAMED),
        fallbacks: fellBack.slice(0, NAMED),
        budget,
      },
      `engine deaths: ${ran.length} cancel pass(es) run in risk order${fellBack.length > 0 ? `, ${fellBack.length} fall back to the 5 s schedule (the IP's weight cannot afford their passes before the deadline)` : ""}`,
    );
  };
  return createDeathGate({
    config: {
      budget,
      windowMs: DEATH_WINDOW_MS,
      // a live engine's death needs its whole pass (read first unless the engines announce their orders)
      reserveEach:
        passWeight(Boolean(config.guardSocket) && config.guardAnnouncedOrders) + builders * passWeight(false),
    },
    canceller,
    timers: runtime.timers,
    mono: () => monotonicOf(runtime.clock),
    wall: now,
    passCost: (account) => {
      const known = knows((vaults.get(account) ?? account).toLowerCase());
      return {
        inTime:
          (known ? PASS_WEIGHT.knownInTime : PASS_WEIGHT.readInTime) + builders * PASS_WEIGHT.readInTime,
        confirm: (1 + builders) * confirmWeight,
      };
    },
    confirmWeight,
    // a pass must answer before the 5 s fall-back's lead, with room for a read and a confirming read
    marginMs: EXPEDITE_LEAD_MS + 2 * config.requestTimeout,
    accountOf: (user) => users.get(user.toLowerCase()) ?? user,
    onCommands: said,
  });
}
