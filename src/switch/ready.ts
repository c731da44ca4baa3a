/**
 * One step's output (raft's Ready) and its effects: what the machine (machine.ts) asks the driver (driver.ts) to
 * do, each effect a tagged value the driver's one table of handlers (effects.ts) carries out.
 */
import type { ClosePass, FeatureEffect } from "../core/feature.js";
import type { SwitchEvent } from "../core/switch-events.js";
import type { LedgerEntry } from "./ledger.js";

/**
 * What the driver is asked to do, one tagged effect each: a feature adds a kind and its handler in the driver's
 * one table (effects.ts), never a field of `Ready` nor a branch of the driver. Each is answered, if at all, by the
 * machine's events named here.
 */
export type Effect =
  /** a push of the schedule (answered with `pushConfirmed` / `pushFailed`, or `syncFailed`) */
  | { kind: "push"; id: number; cancelAt: number; expiresAfterMs: number }
  /** a stop's removal of the schedule (answered with `removalConfirmed` / `removalFailed`) */
  | { kind: "removal"; expiresAfterMs: number }
  /** the engine-down policy's cancel of the account's orders (answered with `ordersCancelled`) */
  | { kind: "cancelOrders"; cancelStops: boolean }
  /** the features' (the kill, the close, the drill's, the record read: core/feature.ts) */
  | FeatureEffect
  /** re-derive the signer's nonces: the next nonce is above `floor` (which may be lower) */
  | { kind: "nonceFloor"; floor: number; reason: string }
  /** a trigger was counted: the daemon polls exposure */
  | { kind: "pollExposure" };

/** One close pass of the escalation (or the kill's): its reason and number (the latch's `pass`). */
export type { ClosePass };

/** One effect of kind `K`. */
export type EffectOf<K extends Effect["kind"]> = Extract<Effect, { kind: K }>;

/** What goes out: a request to the exchange (one at most per step). */
export type Send = EffectOf<"push" | "removal">;

/**
 * The order in which the driver carries out a Ready's effects, after its entry: the request, the cancels, the
 * kill (its close after its cancels), the close, the drill's, the record read, the nonces, the exposure poll.
 * Kinds of one rank share a slot: a step asks for one of them at most (a later ask replaces it: context.ts).
 */
export const EFFECT_ORDER: { readonly [K in Effect["kind"]]: number } = {
  push: 0,
  removal: 0,
  cancelOrders: 1,
  kill: 2,
  closePositions: 3,
  drillPlace: 4,
  drillVerify: 5,
  drillCancel: 6,
  readRecord: 7,
  nonceFloor: 8,
  pollExposure: 9,
};

/**
 * One step's output (raft's Ready), carried out by the driver in this order: persist `entry` (the log: with
 * `mustSync`, a request waits until it is durable, within `syncBudgetMs`), the `effects` in their list's order
 * (`EFFECT_ORDER`), set the one wake-up, publish the events, answer a stop (`done`). `mustSync` is the
 * write-ahead: the request may leave only once `entry` is on disk (the machine decided the file does not already
 * cover it: write-ahead.ts), and the acts that take something away wait for it (the HALTED latch); a write that
 * runs out of budget is answered with `syncFailed`. Every durable write is answered with `persisted`.
 */
export type Ready = {
  entry?: LedgerEntry | undefined;
  /** the number of `entry` among those handed to the store: a `persisted` event names it once it is durable */
  entrySeq?: number | undefined;
  mustSync: boolean;
  syncBudgetMs?: number | undefined;
  /** what the driver does, in the order it does it (`EFFECT_ORDER`) */
  effects: Effect[];
  events: SwitchEvent[];
  /** monotonic ms of the next wake-up (`wake` event), null for none */
  wakeAt: number | null;
  done?: ShutdownOutcome | undefined;
};

/** A stop's answer (the Ready's `done`): what became of the schedule the exchange holds. */
export type ShutdownOutcome = {
  account: string;
  outcome: "removed" | "kept" | "failed" | "skipped";
  reason?: string;
  message?: string;
};
