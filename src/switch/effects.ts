/**
 * The switch's I/O, one function per effect a Ready asks for: each carries out one request (a push, the removal,
 * a record read, the order cancel) and turns its answer into the machine's events. Nothing here decides: a
 * failure is described (failure.ts) and judged by the machine; every answer's Date goes to the machine as a
 * sample. The driver (driver.ts) calls these and keeps them in flight (`inFlight`).
 */
import type { Logger } from "../core/logger.js";
import type { ExchangeTime, Timers } from "../core/runtime.js";
import { answerDateOf } from "../protocol/hyperliquid/exchange.js";
import type { CloseOutcome, CreateSwitchParameters } from "./api.js";
import { describeFailure } from "./failure.js";
import type { Event, Send } from "./model.js";
import type { RecordResult } from "./record.js";

/**
 * The driver's work in flight: `track` runs asynchronous work (a throw, even after an await, is logged and never
 * an unhandled rejection; `settle` waits for what is tracked), `part` one synchronous part of a Ready (a throw is
 * logged and the rest carried out: the machine keeps its model).
 */
export function inFlight(log: Logger) {
  const busy = new Set<Promise<unknown>>();
  const failed = (what: string, err: unknown) =>
    log.error(
      { event: "switch.effect_failed", effect: what, err },
      `carrying out ${what} threw; the switch goes on`,
    );
  const track = (what: string, work: () => Promise<unknown>, settled = true) => {
    const safe = Promise.resolve()
      .then(work)
      .catch((err: unknown) => failed(what, err));
    if (!settled) return;
    busy.add(safe);
    void safe.finally(() => busy.delete(safe));
  };
  const part = (what: string, fn: () => void) => {
    try {
      fn();
    } catch (err) {
      failed(what, err);
    }
  };
  const settle = async () => {
    for (let i = 0; i < 20 && busy.size > 0; i++) await Promise.allSettled([...busy]);
  };
  return { track, part, settle };
}

export type Effects = {
  push(s: Extract<Send, { kind: "push" }>): Promise<void>;
  removal(expiresAfterMs: number): Promise<void>;
  readRecord(): Promise<void>;
  /** A record read (asked for, or the daemon's own record watch) as the machine's event. */
  recordRead(r: RecordResult): void;
  cancelOrders(cancelStops: boolean): Promise<void>;
  closePositions(pass: number, mayProceed: () => string | null): Promise<CloseOutcome>;
  /** the operator's kill: every resting order, stops included (answered with `killCancelled`) */
  killOrders(by: string): Promise<{ confirmed: boolean; cancelled: number; kept: number; detail?: string }>;
  drillPlace(id: string): Promise<void>;
  drillVerify(v: { id: string; oid: number }): Promise<void>;
  drillCancel(c: { oid: number; coin: string }): Promise<void>;
};

export function createEffects(
  p: CreateSwitchParameters,
  time: ExchangeTime,
  timers: Timers,
  dispatch: (e: Event) => void,
): Effects {
  const { account, vaultAddress, client } = p;

  /** Every answer's Date is a sample the machine judges (docs/daemon.md "What the switch believes about time"). */
  const observe = (date: number | undefined, sentMono: number) => {
    if (date !== undefined) dispatch({ type: "clockSample", date, sentMono, receivedMono: time.monotonic() });
  };

  const push = async ({ id, cancelAt, expiresAfterMs }: Extract<Send, { kind: "push" }>) => {
    const controller = new AbortController();
    // The request cannot land after its expiresAfter: stop waiting for it then (monotonic).
    const abort = timers.after(expiresAfterMs, () => controller.abort());
    const sentMono = time.monotonic();
    try {
      const r = await client.scheduleCancel({
        time: cancelAt,
        vaultAddress,
        expiresAfterMs,
        signal: controller.signal,
      });
      p.nonces?.accepted(r.nonce);
      observe(r.serverDate, sentMono);
      dispatch({ type: "pushConfirmed", id, latencyMs: r.latencyMs });
    } catch (error) {
      observe(answerDateOf(error), sentMono);
      dispatch({ type: "pushFailed", id, sentMono, ...describeFailure(error) });
    } finally {
      abort.cancel();
    }
  };

  const removal = async (expiresAfterMs: number) => {
    try {
      await client.scheduleCancel({ vaultAddress, expiresAfterMs });
      return dispatch({ type: "removalConfirmed" });
    } catch (error) {
      const failure = describeFailure(error);
      // The machine judges the volume against the gate; unreadable is null (then nothing is proven).
      let cumulativeVolume: number | null | undefined;
      if (failure.kind === "volume_gate" && p.cumulativeVolume)
        cumulativeVolume = await p.cumulativeVolume(account).catch(() => null);
      dispatch({ type: "removalFailed", ...failure, cumulativeVolume });
    }
  };

  const recordRead = (r: RecordResult) =>
    dispatch(
      r.available
        ? { type: "record", evidence: { ...r, at: time.now() } }
        : { type: "record", evidence: null, detail: `${r.reason}: ${r.detail}` },
    );

  const readRecord = async () => {
    if (!p.readRecord) return dispatch({ type: "record", evidence: null, detail: "no record is configured" });
    const r = await p.readRecord(account).catch(
      (error: unknown): RecordResult => ({
        available: false,
        reason: "error",
        detail: error instanceof Error ? error.message : String(error),
      }),
    );
    recordRead(r);
  };

  const cancelOrders = async (cancelStops: boolean) => {
    const none = { confirmed: false, cancelled: 0, kept: 0 };
    const r = !p.cancelOpenOrders
      ? { ...none, detail: "no order canceller is wired" }
      : await p
          .cancelOpenOrders({ account, ...(vaultAddress ? { vaultAddress } : {}), cancelStops })
          .catch((error: unknown) => ({
            ...none,
            detail: error instanceof Error ? error.message : String(error),
          }));
    dispatch({ type: "ordersCancelled", ...r });
  };

  const closePositions = async (pass: number, mayProceed: () => string | null): Promise<CloseOutcome> => {
    const none = { flat: false, orders: [], filledUsd: 0, dust: 0 };
    if (!p.closePositions) {
      dispatch({
        type: "closeResult",
        ...none,
        orders: 0,
        refusal: "unavailable",
        detail: "no closer is wired",
      });
      return { ...none, refusal: "unavailable", detail: "no closer is wired" };
    }
    const r: CloseOutcome = await p
      .closePositions({ account, ...(vaultAddress ? { vaultAddress } : {}), pass, mayProceed })
      .catch((error: unknown) => ({
        flat: false,
        orders: [],
        filledUsd: 0,
        dust: 0,
        refusal: "unavailable",
        detail: error instanceof Error ? error.message : String(error),
      }));
    dispatch({
      type: "closeResult",
      flat: r.flat,
      orders: r.orders.length,
      filledUsd: r.filledUsd,
      dust: r.dust,
      refusal: r.refusal,
      ...(r.detail ? { detail: r.detail } : {}),
      reports: r.orders.map((o) => ({ ...o })),
      ...(r.remaining !== undefined ? { remaining: r.remaining } : {}),
    });
    return r;
  };

  const killOrders = async (by: string) => {
    const none = { confirmed: false, cancelled: 0, kept: 0 };
    const cancel = p.killOrders ?? p.cancelOpenOrders;
    // (one account-wide call: the canceller covers each listed dex; protocol/hyperliquid/cancel.ts)
    const r = !cancel
      ? { ...none, detail: "no order canceller is wired" }
      : await cancel({ account, ...(vaultAddress ? { vaultAddress } : {}), cancelStops: true }).catch(
          (error: unknown) => ({ ...none, detail: error instanceof Error ? error.message : String(error) }),
        );
    dispatch({ type: "killCancelled", by, ...r });
    return r;
  };

  const drillPlace = async (id: string) => {
    if (!p.drillIo)
      return dispatch({ type: "drillPlaced", id, oid: null, coin: null, detail: "no drill is wired" });
    const r = await p.drillIo.place({ account, vaultAddress });
    dispatch(
      "error" in r
        ? { type: "drillPlaced", id, oid: null, coin: null, detail: r.error }
        : {
            type: "drillPlaced",
            id,
            oid: r.oid,
            coin: r.coin,
            detail: `buy ${r.size} ${r.coin} @ ${r.price} (ALO)`,
          },
    );
  };

  const drillVerify = async ({ id, oid }: { id: string; oid: number }) => {
    const r = p.drillIo
      ? await p.drillIo.status({ account, vaultAddress, oid })
      : { status: null, statusTimestamp: null, detail: "no drill is wired" };
    dispatch({
      type: "drillVerified",
      id,
      status: r.status,
      statusTimestamp: r.statusTimestamp,
      detail: r.detail,
    });
  };

  const drillCancel = async ({ oid, coin }: { oid: number; coin: string }) => {
    await p.drillIo?.cancel({ account, vaultAddress, oid, coin });
  };

  return {
    push,
    removal,
    readRecord,
    recordRead,
    cancelOrders,
    closePositions,
    killOrders,
    drillPlace,
    drillVerify,
    drillCancel,
  };
}
