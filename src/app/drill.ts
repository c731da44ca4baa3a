/**
 * The `drill` control command (docs/operations.md, "The drill"): the daemon's side of `hl-deadman drill`. Without
 * `confirm` it says what the drill would cost (the triggers left today, the network, the coin); with it, and on
 * mainnet only with `mainnet` too (asked twice), it starts the switch's drill (src/switch/drill.ts), waits for its
 * end, reads the exchange's record for the drill's push, and writes the drill report (JSON and text) in
 * `<stateDir>/drills/`. The plan lists what rests now on each listed dex (orders and reduce-only stops by count and
 * kind): the drill's fire cancels whatever rests at fire time, so with stops resting a confirm must carry
 * `cancelStops` as well.
 */
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { NETWORK_URLS } from "../config/networks.js";
import type { EventBus } from "../core/events.js";
import { writeFileAtomic } from "../core/files.js";
import type { Timers } from "../core/runtime.js";
import { isProtectiveStop } from "../protocol/hyperliquid/cancel.js";
import type { InfoClient } from "../protocol/hyperliquid/info.js";
import type { Switch } from "../switch/index.js";
import type { RecordResult } from "../switch/record.js";
import type { ControlAnswer, ControlRequest } from "./control.js";

/** A drill ends within its lead, its margin and the requests around them; beyond this the command stops waiting. */
export const DRILL_WAIT_MS = 60_000;
export const DRILLS_DIR = "drills";

/** What rests on one dex now, by count and kind (the drill's fire cancels whatever rests at fire time). */
export type RestingOnDex =
  | {
      dex: string;
      /** every open order */
      orders: number;
      /** reduce-only TP/SL (trigger) orders among them: the engine's protection of its positions */
      stops: number;
      /** count per `orderType` (Limit, Stop Market, Take Profit Market, …) */
      kinds: Record<string, number>;
    }
  | { dex: string; error: string };

/** Reads each listed dex's open orders for the drill's plan (frontendOpenOrders marks the stops). */
export async function restingNow(
  info: Pick<InfoClient, "frontendOpenOrders">,
  user: string,
  dexes: readonly string[],
): Promise<RestingOnDex[]> {
  return Promise.all(
    dexes.map(async (dex): Promise<RestingOnDex> => {
      try {
        const open = await info.frontendOpenOrders(dex === "" ? { user } : { user, dex });
        const kinds: Record<string, number> = {};
        for (const o of open) {
          const kind = o.orderType ?? (o.isTrigger === true ? "trigger" : "Limit");
          kinds[kind] = (kinds[kind] ?? 0) + 1;
        }
        return { dex, orders: open.length, stops: open.filter(isProtectiveStop).length, kinds };
      } catch (error) {
        return { dex, error: (error instanceof Error ? error.message : String(error)).slice(0, 300) };
      }
    }),
  );
}

/** One line per dex: `the first perp dex: 6 order(s) (3 Limit, 1 Stop Market, …), 2 reduce-only stop(s)`. */
export function describeResting(resting: readonly RestingOnDex[]): string[] {
  return resting.map((r) => {
    const name = r.dex === "" ? "the first perp dex" : `dex ${r.dex}`;
    if ("error" in r) return `${name}: could not be read (${r.error})`;
    if (r.orders === 0) return `${name}: nothing rests`;
    const kinds = Object.entries(r.kinds)
      .map(([k, n]) => `${n} ${k}`)
      .join(", ");
    return `${name}: ${r.orders} order(s) (${kinds}), ${r.stops} of them reduce-only stop(s)`;
  });
}

/** Reduce-only stops resting on any dex (or a dex that could not be read, which may hold some). */
export function stopsAtRisk(resting: readonly RestingOnDex[]): number | null {
  if (resting.some((r) => "error" in r)) return null;
  return resting.reduce((n, r) => n + ("stops" in r ? r.stops : 0), 0);
}

export type DrillReport = {
  id: string;
  account: string;
  network: string;
  by: string;
  startedAt: string;
  endedAt: string;
  passed: boolean;
  /** the drill order's status as the exchange reports it (scheduledCancel proves the fire) */
  status: string | null;
  statusTimestamp: number | null;
  /** the drill's cancel time */
  cancelAt: number | null;
  /** the exchange's record (explorer userDetails): the drill's scheduleCancel seen accepted, or why not known */
  record: { seen: boolean | null; detail: string };
  triggersLeftBefore: number;
  detail: string;
  reportFiles: string[];
};

/**
 * Where a drill would run: `mainnet` only on the official mainnet API (real money: asked twice), `testnet` on the
 * official testnet, else another host (a simulator, a third-party node) with the network its signatures are for.
 */
export function networkOf(apiUrl: string, network: "mainnet" | "testnet"): string {
  const url = apiUrl.replace(/\/+$/, "");
  if (url === NETWORK_URLS.mainnet.apiUrl) return "mainnet";
  if (url === NETWORK_URLS.testnet.apiUrl) return "testnet";
  return `another API host (signing for ${network}: a simulator or a third-party node)`;
}

export function renderDrillReport(r: DrillReport): string {
  const t = (ms: number | null) => (ms === null ? "-" : new Date(ms).toISOString());
  return [
    `hl-deadman drill ${r.id}: ${r.passed ? "PASSED" : "FAILED"}`,
    `account      ${r.account} (${r.network})`,
    `asked by     ${r.by}`,
    `started      ${r.startedAt}`,
    `ended        ${r.endedAt}`,
    `cancel time  ${t(r.cancelAt)}`,
    `order status ${r.status ?? "unknown"} at ${t(r.statusTimestamp)}`,
    `record       ${r.record.seen === null ? "unknown" : r.record.seen ? "the drill's scheduleCancel is in the explorer record" : "NOT in the explorer record"} (${r.record.detail})`,
    `triggers     1 spent of the ${r.triggersLeftBefore} left today`,
    `detail       ${r.detail}`,
    "",
  ].join("\n");
}

export function createDrillCommand(deps: {
  stateDir: string;
  network: string;
  coin: string;
  bus: EventBus;
  timers: Timers;
  now: () => number;
  readRecord: ((account: string) => Promise<RecordResult>) | undefined;
  wired: boolean;
  /** what rests now on each listed dex (the plan lists it; a confirm re-reads it); absent: not listed */
  resting?: ((account: string) => Promise<RestingOnDex[]>) | undefined;
}) {
  let running = false;
  return async (s: Switch | undefined, request: ControlRequest): Promise<ControlAnswer> => {
    if (!s)
      return { ok: false, error: `${request.account ?? "no account"} is not an account this daemon arms` };
    if (!deps.wired)
      return { ok: false, error: "this daemon's exchange client cannot place orders: no drill" };
    const st = s.status();
    const triggersLeft = Math.max(0, st.triggerLimit - st.triggersToday);
    const resting = deps.resting ? await deps.resting(s.account) : null;
    const plan = {
      account: s.account,
      network: deps.network,
      coin: deps.coin,
      triggersLeft,
      state: st.state,
      ...(resting ? { resting } : {}),
    };
    if (request.options?.confirm !== true) return { ok: true, result: { plan } };
    // The fire cancels whatever rests at fire time, reduce-only stops included: read again now, and refused
    // unless the operator said `--cancel-stops` when any rest (or a dex cannot be read, which may hold some).
    if (resting && request.options?.cancelStops !== true) {
      const stops = stopsAtRisk(resting);
      if (stops !== 0)
        return {
          ok: false,
          error: `${stops === null ? "a listed dex could not be read, so reduce-only stops may rest" : `${stops} reduce-only stop(s) rest`}; the drill's fire cancels them with everything else: pass --cancel-stops to drill anyway (${describeResting(resting).join("; ")})`,
          stopsRest: true,
        };
    }
    if (deps.network === "mainnet" && request.options?.mainnet !== true)
      return {
        ok: false,
        error: "this daemon is on mainnet: a drill there must be asked for twice (--mainnet as well)",
      };
    if (running) return { ok: false, error: "a drill is running" };
    const id = `${new Date(deps.now()).toISOString().replace(/[-:]/g, "").slice(0, 15)}-${s.account.slice(2, 8)}`;
    const by = request.by ?? "unnamed";
    const startedAt = new Date(deps.now()).toISOString();
    // The end is the switch's `drillDone` event on the bus: subscribed before the start, so it cannot be missed.
    let unsubscribe = () => {};
    const ended = new Promise<Record<string, unknown> | null>((resolve) => {
      const limit = deps.timers.after(DRILL_WAIT_MS, () => resolve(null));
      unsubscribe = deps.bus.subscribe((e) => {
        if (e.module === "switch" && e.account === s.account && e.type === "drillDone" && e.id === id) {
          limit.cancel();
          resolve(e);
        }
      });
    });
    running = true;
    try {
      // A connected engine is told first: the machine's `drillStarted`, emitted before the drill's order is asked
      // for, sends the guard's `drill <account> <until>` line (src/app/parts/guard.ts).
      const started = s.dispatch({ type: "drill", id, by });
      if (!started.started) return { ok: false, error: started.reason };
      const done = await ended;
      if (!done)
        return {
          ok: false,
          error: `drill ${id} did not end within ${DRILL_WAIT_MS / 1000} s: see the daemon's log`,
        };
      const cancelAt = typeof done.cancelAt === "number" ? done.cancelAt : null;
      const record = await recordOf(deps.readRecord, s.account, cancelAt);
      const report: DrillReport = {
        id,
        account: s.account,
        network: deps.network,
        by,
        startedAt,
        endedAt: new Date(deps.now()).toISOString(),
        passed: done.fired === true && record.seen !== false,
        status: typeof done.status === "string" ? done.status : null,
        statusTimestamp: typeof done.statusTimestamp === "number" ? done.statusTimestamp : null,
        cancelAt,
        record,
        triggersLeftBefore: triggersLeft,
        detail: String(done.detail ?? ""),
        reportFiles: [],
      };
      const dir = join(deps.stateDir, DRILLS_DIR);
      await mkdir(dir, { recursive: true, mode: 0o700 });
      report.reportFiles = [join(dir, `drill-${id}.json`), join(dir, `drill-${id}.txt`)];
      await writeFileAtomic(report.reportFiles[0]!, `${JSON.stringify(report, null, 2)}\n`);
      await writeFileAtomic(report.reportFiles[1]!, renderDrillReport(report));
      return { ok: true, result: { report, text: renderDrillReport(report) } };
    } finally {
      running = false;
      unsubscribe();
    }
  };
}

/** Whether the explorer record lists the drill's scheduleCancel as accepted (null: no record to ask). */
async function recordOf(
  read: ((account: string) => Promise<RecordResult>) | undefined,
  account: string,
  cancelAt: number | null,
): Promise<DrillReport["record"]> {
  if (!read) return { seen: null, detail: "no explorer record is configured (--explorer-url)" };
  if (cancelAt === null) return { seen: null, detail: "the drill's push was not confirmed" };
  const r = await read(account).catch((e: unknown) => ({
    available: false as const,
    reason: "error" as const,
    detail: String(e),
  }));
  if (!r.available) return { seen: null, detail: `the record is unavailable: ${r.detail}` };
  const tx = r.schedules.find((x) => x.deadline === cancelAt);
  if (!tx)
    return {
      seen: false,
      detail: `no scheduleCancel for ${new Date(cancelAt).toISOString()} among ${r.schedules.length} listed`,
    };
  return tx.error === null
    ? { seen: true, detail: `accepted in transaction ${tx.hash}` }
    : { seen: false, detail: `refused: ${tx.error}` };
}
