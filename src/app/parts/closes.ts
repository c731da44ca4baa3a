/**
 * The executors that take positions and place orders: escalation step 2's closes (cancel, then close reduce-only in
 * slices; built for every account, since `kill --close` closes any account, while the escalation's rules run only
 * for the opted-in ones) and the drill's requests. Wired by the record component (src/app/parts/record.ts).
 */
import type { Config } from "../../config/schema.js";
import type { DrillIo } from "../../core/orders-port.js";
import { createCloseExecutor } from "../../orders/close-executor.js";
import { createDrillIo } from "../../orders/drill-io.js";
import type { InfoClient } from "../../protocol/hyperliquid/info.js";
import type { CancelOpenOrders, ClosePositions } from "../../switch/index.js";
import type { StartDaemonParameters } from "../context.js";
import { hasCancel, hasOrder, type PerSigner } from "./signers.js";

export function buildCloses({
  params,
  config,
  info,
  actOnDexes,
  raw,
  killOrders,
  perSigner,
}: {
  params: StartDaemonParameters;
  config: Config;
  info: InfoClient;
  /** the dexes the closes cover */
  actOnDexes: string[];
  /** the plain canceller and the kill's (a close cancels first) */
  raw: CancelOpenOrders | undefined;
  killOrders: CancelOpenOrders | undefined;
  perSigner: PerSigner;
}): { closePositions: ClosePositions | undefined; drillIo: DrillIo | undefined } {
  // Escalation step 2 (opted-in accounts only): cancel, then close reduce-only in slices.
  // (built for every account: `kill --close` closes any account; the escalation's rules only opted-in ones)
  const closers = perSigner((c) =>
    hasOrder(c)
      ? createCloseExecutor({
          info,
          dexes: actOnDexes,
          exchange: c,
          cancelOpenOrders: params.cancelOpenOrders ?? raw ?? killOrders,
          slippagePct: config.closeSlippagePct,
          maxSliceUsd: config.closeSliceUsd,
        })
      : undefined,
  );
  const closePositions: ClosePositions | undefined =
    params.closePositions ?? (closers ? (p) => closers(p.account)(p) : undefined);
  // The drill's requests: the exchange client places and cancels, the info client reads (drill-io.ts).
  const drills = perSigner((c) =>
    hasOrder(c) && hasCancel(c) ? createDrillIo({ info, exchange: c, coin: config.drillCoin }) : undefined,
  );
  const drillIo: DrillIo | undefined = drills
    ? {
        place: (p) => drills(p.account).place(p),
        status: (p) => drills(p.account).status(p),
        cancel: (p) => drills(p.account).cancel(p),
      }
    : undefined;
  return { closePositions, drillIo };
}
