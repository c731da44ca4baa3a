/**
 * The check after every fire (docs/operations.md, "Every listed dex"): a fired schedule (the engine's death, a
 * lapse, an expedite or a drill) is documented to cancel the account's orders, but the exchange's docs do not say
 * whether it reaches builder-deployed perp dexes (docs/exchange-behaviour.md, "Fires on builder-deployed dexes").
 * So a little after each fire the daemon reads every listed dex's open orders and says which survived, per dex.
 * While the engine is down, its own cancel covers the dexes with survivors (the same cancel as the engine-down
 * policy `cancel`, reduce-only stops kept unless `--cancel-stops`); while the engine is up, the survivors may be the
 * engine's new orders: they are reported, never taken.
 *
 * It never throws: a dex that cannot be read is reported as unknown.
 */
import type { Logger } from "../core/logger.js";
import type { Timers } from "../core/runtime.js";
import type { InfoClient } from "../protocol/hyperliquid/info.js";
import type { CancelOpenOrders } from "../switch/index.js";

/** The fire's block and the open-order lists settle this long after the deadline before the read. */
export const FIRE_CHECK_DELAY_MS = 2_000;

export type FireCheckResult = {
  account: string;
  /** per dex: the open orders after the fire (oids), or the read's error */
  dexes: Array<{ dex: string; open: number[] } | { dex: string; error: string }>;
  /** the dexes whose survivors the daemon cancelled itself (the engine was down), with the outcome */
  covered: { dexes: string[]; confirmed: boolean; cancelled: number; detail?: string } | null;
};

export function createFireCheck(deps: {
  info: Pick<InfoClient, "frontendOpenOrders">;
  dexes: readonly string[];
  /** the daemon's own cancel (every listed dex, or only those named); absent: survivors are only reported */
  cancel: CancelOpenOrders | undefined;
  cancelStops: boolean;
  /** whether the account's engine is up now (the guard's view) */
  engineUp: (account: string) => boolean;
  /** the user whose orders to read (a vault's address for a vault account) */
  userOf: (account: string) => { user: string; vaultAddress?: string | undefined };
  logger: Logger;
}): (account: string) => Promise<FireCheckResult> {
  const log = deps.logger.child({ module: "fire-check" });
  return async (account) => {
    const { user, vaultAddress } = deps.userOf(account);
    const dexes = await Promise.all(
      deps.dexes.map(async (dex) => {
        try {
          const open = await deps.info.frontendOpenOrders(dex === "" ? { user } : { user, dex });
          return { dex, open: open.map((o) => o.oid) };
        } catch (error) {
          return { dex, error: (error instanceof Error ? error.message : String(error)).slice(0, 300) };
        }
      }),
    );
    const survived = dexes.filter(
      (d): d is { dex: string; open: number[] } => "open" in d && (d.open?.length ?? 0) > 0,
    );
    const unread = dexes.filter((d) => "error" in d).map((d) => d.dex);
    const result: FireCheckResult = { account, dexes, covered: null };
    const name = (d: string) => (d === "" ? "the first perp dex" : `dex ${d}`);
    if (survived.length === 0 && unread.length === 0) {
      log.info(
        { event: "fire.checked", account, dexes: deps.dexes, survived: 0 },
        `after the fire: no open order on ${deps.dexes.map(name).join(", ")}`,
      );
      return result;
    }
    const up = deps.engineUp(account);
    log.warn(
      {
        event: "fire.survivors",
        account,
        survivors: Object.fromEntries(survived.map((d) => [d.dex, d.open])),
        ...(unread.length > 0 ? { unread } : {}),
        engineUp: up,
      },
      `after the fire: ${survived.map((d) => `${d.open.length} order(s) still open on ${name(d.dex)}`).join(", ") || "no survivor read"}${unread.length > 0 ? `; ${unread.map(name).join(", ")} could not be read` : ""}${survived.length === 0 ? "" : up ? " (the engine is up: they may be its new orders; left in place)" : deps.cancel ? " (the engine is down: the daemon cancels them itself)" : " (no cancel is configured: they stay)"}`,
    );
    if (survived.length === 0 || up || !deps.cancel) return result;
    const covered = survived.map((d) => d.dex);
    const c = await deps.cancel({
      account,
      ...(vaultAddress !== undefined ? { vaultAddress } : {}),
      cancelStops: deps.cancelStops,
      dexes: covered,
    });
    result.covered = { dexes: covered, ...c };
    const fields = { event: "fire.covered", account, dexes: covered, ...c };
    const message = `the daemon's own cancel on ${covered.map(name).join(", ")}: cancelled ${c.cancelled}, kept ${c.kept}${c.confirmed ? "" : ` — NOT confirmed: ${c.detail ?? "unknown"}`}`;
    if (c.confirmed) log.info(fields, message);
    else log.error(fields, message);
    return result;
  };
}

/** Runs `check` for an account `FIRE_CHECK_DELAY_MS` after each fire it is told of; pending checks end on `stop`. */
export function scheduleFireChecks(
  timers: Timers,
  check: (account: string) => Promise<unknown>,
): { fired(account: string): void; stop(): Promise<void> } {
  const pending = new Set<{ cancel(): void }>();
  const running = new Set<Promise<unknown>>();
  return {
    fired(account) {
      const t = timers.after(FIRE_CHECK_DELAY_MS, () => {
        pending.delete(t);
        const work = check(account).catch(() => {});
        running.add(work);
        void work.finally(() => running.delete(work));
      });
      pending.add(t);
    },
    async stop() {
      for (const t of pending) t.cancel();
      pending.clear();
      await Promise.allSettled([...running]);
    },
  };
}
