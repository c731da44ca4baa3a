/**
 * The switch's I/O: the one table of effect handlers (`EffectTable`, kind → handler, exhaustive: a kind without a
 * handler does not compile) the driver (driver.ts) runs each Ready's effects through, and the write of its entry
 * they wait on. Each handler carries out one request (a push, the removal, a record read, the order cancel, ...)
 * and turns its answer into the machine's events. Nothing here decides: a failure is described (failure.ts) and
 * judged by the machine; every answer's Date goes to the machine as a sample.
 */
import type { ExchangeTime, TimerHandle, Timers } from "../core/runtime.js";
import { answerDateOf } from "../protocol/hyperliquid/exchange.js";
import type { CloseOutcome, EffectsParameters, KillOutcome } from "./api.js";
import { describeFailure } from "./failure.js";
import { closeHold } from "./features.js";
import type { Durability } from "./ledger.js";
import type { Effect, EffectOf, Event, Ready, Send, SwitchModel } from "./model.js";
import type { RecordResult } from "./record.js";

/**
 * The driver's work in flight: `track` runs asynchronous work (a throw, even after an await, is reported to
 * `failed` and never an unhandled rejection: the work's promise then holds undefined; `settle` waits for what is
 * tracked), `part` one synchronous part of a Ready (a throw is reported and the rest carried out: the machine keeps
 * its model). `failed` publishes the switch's `effectFailed` event (driver.ts).
 */
export function inFlight(failed: (what: string, err: unknown) => void) {
  const busy = new Set<Promise<unknown>>();
  const track = <T>(what: string, work: () => Promise<T>, settled = true): Promise<T | undefined> => {
    const safe = Promise.resolve()
      .then(work)
      .catch((err: unknown) => {
        failed(what, err);
        return undefined;
      });
    if (!settled) return safe;
    busy.add(safe);
    void safe.finally(() => busy.delete(safe));
    return safe;
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

export type InFlight = ReturnType<typeof inFlight>;

/** The one wake-up (the Ready's `wakeAt`, monotonic): re-set only when the machine asks for another time. */
export function oneWake(time: ExchangeTime, timers: Timers, woken: () => void) {
  let wake: { at: number; handle: TimerHandle } | null = null;
  return (at: number | null) => {
    if (wake?.at === at) return;
    wake?.handle.cancel();
    wake = null;
    if (at === null) return;
    const handle = timers.after(Math.max(0, at - time.monotonic()), () => {
      wake = null;
      woken();
    });
    wake = { at, handle };
  };
}

/** What one Ready's effects wait on: the write of its entry (the log). */
export type Carry = {
  /**
   * with `mustSync`, the entry's durable write a request waits for (`persisted` said first); undefined when none
   * is asked for, or the store threw (a store that throws holds no request back)
   */
  written: Promise<Durability | undefined> | undefined;
  /** the acts that take something away wait for the entry (the HALTED latch, the pass) within the budget */
  synced(): Promise<unknown>;
};

/** The one table: kind → handler. Each starts its work (tracked) and returns; the driver decides nothing. */
export type EffectTable = { readonly [K in Effect["kind"]]: (e: EffectOf<K>, c: Carry) => void };

/** The operator's kill answered: its cancels, its close (if it had one), and how long the cancels took. */
export type Killed = Omit<Extract<KillOutcome, { done: true }>, "done" | "latched">;

export function createEffects(
  p: EffectsParameters,
  time: ExchangeTime,
  timers: Timers,
  dispatch: (e: Event) => void,
  run: { work: InFlight; model: () => SwitchModel; killed: (r: Killed) => void },
) {
  const { track, part } = run.work;
  const { account, vaultAddress, client, ledger } = p;

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

  /** Stores the Ready's entry; reports it once durable. With `mustSync` its request waits for that. */
  const persist = (ready: Ready): Carry => {
    const entry = ready.entry;
    const budget = ready.syncBudgetMs ?? p.requestTimeoutMs;
    const synced = () =>
      entry !== undefined && ready.mustSync
        ? ledger.durable(budget, timers).catch(() => "failed")
        : Promise.resolve();
    let written: Carry["written"];
    if (entry === undefined) return { written, synced };
    const wait = async () => {
      const d = await ledger.durable(budget, timers);
      if (d === "written" && ready.entrySeq !== undefined)
        dispatch({ type: "persisted", seq: ready.entrySeq, updatedAt: ledger.writtenUpdatedAt });
      return d;
    };
    part("persist", () => {
      ledger.put(entry);
      written = track("persist", wait, false);
    });
    return { written: ready.mustSync ? written : undefined, synced };
  };

  const send = (s: Send) => track(s.kind, () => (s.kind === "push" ? push(s) : removal(s.expiresAfterMs)));
  /**
   * The request leaves once its write-ahead is durable (a failed write is logged by the store; protection goes on
   * from memory); a push whose write ran out of budget never leaves (`syncFailed`).
   */
  const request = (s: Send, c: Carry) => {
    const written = c.written;
    if (written === undefined) return void send(s);
    track("persist", async () => {
      const d = await written;
      if (d === undefined) return;
      if (d === "timeout" && s.kind === "push")
        return dispatch({ type: "syncFailed", id: s.id, reason: "disk too slow" });
      send(s);
    });
  };
  // Every close order asks the machine first (closeHold): the engine back stops a pass in flight.
  const close = (pass: number) => closePositions(pass, () => closeHold(run.model()));

  // The HALTED latch and the pass are written ahead of the first close order (src/escalation/): each act waits for
  // the write, within the budget; a disk too slow does not hold it back (the latch is kept in memory).
  const table: EffectTable = {
    push: request,
    removal: request,
    cancelOrders: (e) => void track("cancelOrders", () => cancelOrders(e.cancelStops)),
    kill: (e, c) =>
      void track("kill", async () => {
        const asked = time.monotonic();
        await c.synced();
        const cancel = await killOrders(e.by);
        const cancelMs = time.monotonic() - asked;
        // the kill's close after its cancels
        const closed = e.close ? await close(e.close.pass) : null;
        run.killed({ cancel, close: closed, cancelMs });
      }),
    closePositions: (e, c) =>
      void track("closePositions", async () => {
        await c.synced();
        await close(e.pass);
      }),
    drillPlace: (e) => void track("drillPlace", () => drillPlace(e.id)),
    drillVerify: (e) => void track("drillVerify", () => drillVerify(e)),
    drillCancel: (e) => void track("drillCancel", () => drillCancel(e)),
    readRecord: () => void track("readRecord", readRecord),
    nonceFloor: (e) => p.nonces?.rebase(e.floor),
    pollExposure: () => p.onTrigger?.(account),
  };
  return { table, persist, recordRead };
}
