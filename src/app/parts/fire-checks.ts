/**
 * The check after every fire (src/app/fire-check.ts): every listed dex's open orders are read; a dex the fire
 * missed is covered with the daemon's own cancel. Wired by the pollers component (src/app/parts/pollers.ts).
 */
import type { Config } from "../../config/schema.js";
import type { Logger } from "../../core/logger.js";
import type { Runtime } from "../../core/runtime.js";
import type { InfoClient } from "../../protocol/hyperliquid/info.js";
import type { CancelOpenOrders } from "../../switch/index.js";
import type { Feed } from "../context.js";
import { createFireCheck, scheduleFireChecks } from "../fire-check.js";

export function startFireChecks(ctx: {
  config: Config;
  runtime: Runtime;
  plan: readonly { account: string; vaultAddress: string | undefined }[];
  info: InfoClient;
  logger: Logger;
  actOnDexes: string[];
  fireCancel: CancelOpenOrders | undefined;
  engine: { now(account: string): { up: boolean } };
  triggers: Feed<string>;
}): { stop(): void } {
  const { config, runtime, info, logger } = ctx;
  // After every fire, every listed dex's open orders are read; a dex the fire missed is covered (fire-check.ts).
  const vaults = new Map(ctx.plan.map((p) => [p.account, p.vaultAddress]));
  const fireChecks = scheduleFireChecks(
    runtime.timers,
    createFireCheck({
      info,
      dexes: ctx.actOnDexes,
      cancel: ctx.fireCancel,
      cancelStops: config.cancelStops,
      engineUp: (account) => ctx.engine.now(account).up,
      userOf: (account) => {
        const vaultAddress = vaults.get(account);
        return { user: vaultAddress ?? account, ...(vaultAddress ? { vaultAddress } : {}) };
      },
      logger,
    }),
  );
  ctx.triggers.subscribe((account) => fireChecks.fired(account));
  return fireChecks;
}
