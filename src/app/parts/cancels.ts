/**
 * The daemon's cancellers (docs/operations.md, "Cancel on disconnect"): the engine-down policy's (under `cancel`,
 * through the gate of a simultaneous death, src/fleet-death/), the operator's kill (every resting order, whatever
 * the policy) and the check after a fire (a listed dex the fire missed). Each acts on the first perp dex and on
 * every dex of `--dex`. Wired by the record component (src/app/parts/record.ts).
 */
import type { Config } from "../../config/schema.js";
import type { EventBus } from "../../core/events.js";
import type { ExchangeTime, Runtime } from "../../core/runtime.js";
import type { DeathGate } from "../../fleet-death/gate.js";
import { type CancelExecutor, createCancelExecutor } from "../../protocol/hyperliquid/cancel.js";
import type { InfoClient } from "../../protocol/hyperliquid/info.js";
import type { CancelOpenOrders } from "../../switch/index.js";
import { cancelReporter } from "../../watchers/record-log.js";
import type { StartDaemonParameters } from "../context.js";
import { buildDeathGate } from "./death-gate.js";
import type { KnownOrders } from "./known-orders.js";
import { hasCancel, type PerSigner } from "./signers.js";

export type Cancels = {
  /** the engine-down policy's (`cancel` only; the caller's when given) */
  cancelOpenOrders: CancelOpenOrders | undefined;
  /** every signer's plain canceller (what the closes cancel with before they close) */
  raw: CancelOpenOrders | undefined;
  /** the operator's kill: every resting order, whatever the engine-down policy */
  killOrders: CancelOpenOrders | undefined;
  /** the daemon's own cancel after a fire, on the listed dexes it missed (fire-check.ts); keeps no feed */
  fireCancel: CancelOpenOrders | undefined;
  /** the engine-down passes of a simultaneous death, in risk order within the IP's weight (src/fleet-death/) */
  deathGate: DeathGate | undefined;
};

export function buildCancels({
  params,
  config,
  runtime,
  time,
  plan,
  info,
  bus,
  actOnDexes,
  known: { knownOrders, metaCache },
  perSigner,
  track,
}: {
  params: StartDaemonParameters;
  config: Config;
  runtime: Runtime;
  time: ExchangeTime;
  plan: readonly { account: string; vaultAddress: string | undefined }[];
  info: InfoClient;
  bus: EventBus;
  /** the dexes the cancels cover */
  actOnDexes: string[];
  known: Pick<KnownOrders, "knownOrders" | "metaCache">;
  perSigner: PerSigner;
  /** keeps a promise until it settles (the component awaits them on close) */
  track: (work: Promise<unknown>) => void;
}): Cancels {
  const onReport = cancelReporter(bus);
  // Under `cancel`, each listed builder dex's asset ids (`perpDexs`, its `meta`) are read now, in the background
  // as the first dex's `meta` is: a pass at death then goes from its read to its cancel on every dex.
  const primed = (executor: CancelExecutor): CancelExecutor => {
    const priming = executor.prime();
    track(priming);
    return executor;
  };
  // A simultaneous death's passes share the IP's weight in risk order (src/fleet-death/); the closes, the kill
  // and the checks after a fire go to their cancellers directly.
  let raw: CancelOpenOrders | undefined;
  const gate =
    !params.cancelOpenOrders && config.onEngineDown === "cancel"
      ? buildDeathGate({
          config,
          runtime,
          now: () => time.now(),
          plan,
          dexes: actOnDexes,
          knows: (user) => knownOrders(user) !== null && (metaCache?.get() ?? null) !== null,
          canceller: () => raw!,
          logger: params.logger,
        })
      : undefined;
  const cancellers =
    config.onEngineDown === "cancel"
      ? perSigner((c) =>
          hasCancel(c)
            ? primed(
                createCancelExecutor({
                  info,
                  // every dex the exposure poll reads: a dex read but not cancelled is a dex left trading
                  dexes: actOnDexes,
                  exchange: c,
                  onReport,
                  metaCache,
                  knownOrders,
                  beforeConfirm: gate?.beforeConfirm,
                }),
              )
            : undefined,
        )
      : undefined;
  raw = cancellers ? (p) => cancellers(p.account)(p) : undefined;
  const cancelOpenOrders: CancelOpenOrders | undefined =
    params.cancelOpenOrders ?? (raw && gate ? gate.cancel : raw);
  // A canceller per signer beside the engine-down policy's: the operator's kill (`hl-deadman kill`) cancels every
  // resting order whatever the policy, from the kept-fresh list first (the same fast cancels, then the confirming
  // read); the check after a fire covers a missed dex with the daemon's own cancel, reading what is there.
  const ownCanceller = (useKnown: boolean): CancelOpenOrders | undefined => {
    if (params.cancelOpenOrders) return params.cancelOpenOrders;
    const bySigner = perSigner((c) =>
      hasCancel(c)
        ? createCancelExecutor({
            info,
            dexes: actOnDexes,
            exchange: c,
            onReport,
            ...(metaCache ? { metaCache, ...(useKnown ? { knownOrders } : {}) } : {}),
          })
        : undefined,
    );
    return bySigner ? (p) => bySigner(p.account)(p) : undefined;
  };
  const killOrders = ownCanceller(true);
  const fireCancel = ownCanceller(false);
  return { cancelOpenOrders, raw, killOrders, fireCancel, deathGate: gate };
}
