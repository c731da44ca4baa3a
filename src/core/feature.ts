/**
 * The contract between the switch and its features (the escalation, src/escalation/; the drill, src/drill/): each
 * feature is a small pure machine of its own room, fed the switch's events as its inputs together with the facts of
 * the switch it may decide on (`SwitchView`, computed by the switch at every step), and returning commands the
 * switch carries out (`FeatureCommand`, one closed union: src/switch/features.ts has the table). The switch keeps
 * each feature's model in an opaque slot and never imports a feature; the app hands it the machines (`Features`).
 */
import type { EngineDownCause } from "./events.js";
import type { SwitchState, SwitchStatus } from "./status.js";
import type { SwitchEvent } from "./switch-events.js";

/** The HALTED latch as the ledger keeps it (src/switch/ledger-schema.ts `halted`): only `reset` releases it. */
export type HaltedLatch = {
  since: number;
  reason: string;
  /** the closes, written ahead of every pass (`open`) and when one reports the account flat (`done`) */
  closing?: "open" | "done" | undefined;
  /** passes written ahead since the latch */
  pass?: number | undefined;
  /** the positions left at the last pass's last read ("BTC 0.25, ETH -3") */
  remaining?: string | undefined;
};

/** The read-only facts of the switch a feature decides on, as they are at the step (src/switch/features.ts `viewOf`). */
export type SwitchView = {
  /** the switch is in its running phase (not new, stopping nor stopped) */
  running: boolean;
  state: SwitchState;
  engineUp: boolean;
  /** the HALTED latch on the ledger, or null */
  halted: HaltedLatch | null;
  /** why this replica may not take an action that is unsafe twice now (src/switch/coordination.ts), or null */
  gate: string | null;
  /** the fencing token such an action is taken under; undefined without coordination */
  token: string | undefined;
  /** replicas are coordinated (a role other than `none`) */
  coordinated: boolean;
  /** another live candidate is present (null: unknown) */
  othersAlive: boolean | null;
  /** the day's triggers left (the limit less today's count) */
  triggersLeft: number;
};

/** `mono`: the monotonic clock; `wall`: the time the switch acts on (the exchange's, as the switch believes it). */
export type FeatureNow = { mono: number; wall: number };

/** One close pass of the escalation (or the kill's): its reason and number (the latch's `pass`). */
export type ClosePass = { reason: string; pass: number };

/** One close order as reported to the machine (src/switch/api.ts `CloseOrderReport`). */
export type CloseReport = Readonly<Record<string, string | number | null>>;

/** The effects a feature asks the switch's driver for (src/switch/ready.ts `Effect` includes them). */
export type FeatureEffect =
  /**
   * the operator's kill: cancel every resting order of the account (stops included) at once, then the confirming
   * read (answered with `killCancelled`); with `close`, the kill's close pass, after the cancels
   */
  | { kind: "kill"; by: string; close?: ClosePass | undefined }
  /** the escalation's step 2: cancel, then close the positions reduce-only (answered with `closeResult`) */
  | ({ kind: "closePositions" } & ClosePass)
  /** the drill: place its resting order (answered with `drillPlaced`) */
  | { kind: "drillPlace"; id: string }
  /** the drill: read its order's status (answered with `drillVerified`) */
  | { kind: "drillVerify"; id: string; oid: number; coin: string }
  /** the drill ended without its order being cancelled by the exchange: cancel that one order */
  | { kind: "drillCancel"; oid: number; coin: string }
  /** read the exchange's record (answered with a `record` event) */
  | { kind: "readRecord"; reason: string };

/** What a feature asks of the switch: each kind carried out by one row of src/switch/features.ts `CARRY`. */
export type FeatureCommand =
  /**
   * the HALTED latch on the ledger becomes `latch` (null: released); `write`: it goes to the ledger with the step
   * (`persist`), or must be durable before the step's request or act leaves (`sync`, the write-ahead)
   */
  | { kind: "halted"; latch: HaltedLatch | null; write?: "persist" | "sync" | undefined }
  /** push now, for this reason (the running phase's `kick`) */
  | { kind: "push"; reason: string }
  /** the switch's own fire is proven: its order `oid`, read back `scheduledCancel`, at deadline `cancelAt` */
  | { kind: "ownFire"; cancelAt: number; oid: number }
  /** a deadline that passed without a newer confirmation is counted (the usual rule) */
  | { kind: "checkLapse" }
  | { kind: "effect"; effect: FeatureEffect }
  | { kind: "event"; event: SwitchEvent };

/** A feature's step: its next model, the commands, and its wake-up (undefined: unchanged; null: none). */
export type FeatureStep<M> = {
  model: M;
  commands: readonly FeatureCommand[];
  wakeAt?: number | null | undefined;
};

/** What a feature adds to the switch's status. */
export type FeatureStatus = Partial<Pick<SwitchStatus, "halted" | "drill">>;

/**
 * A feature machine: pure, on its own model and the switch's view. (Methods, so that a machine over its own
 * model type stands where the switch holds the model as opaque.)
 */
export type FeatureMachine<M, I, C> = {
  initial(): M;
  step(model: M, view: SwitchView, input: I, now: FeatureNow, config: C): FeatureStep<M>;
  status(model: M, view: SwitchView): FeatureStatus;
};

// ------------------------------------------------------------------------------------------- the escalation

/** The escalation ladder's configuration (src/escalation/ has the rules). */
export type EscalationConfig = {
  /** the engine down this long closes the positions (ms); null: not by time alone */
  afterDownMs: number | null;
  /** while the engine is down, a position this close to liquidation (percent of the mark) closes them */
  liquidationPct: number | null;
  /** while the engine is down, the account value this many percent below its level at the engine's death */
  drawdownPct: number | null;
  /** while the engine is down, a total notional above this (USD) */
  notionalCapUsd: number | null;
  /** a close pass that did not finish is tried again after this (ms) */
  retryMs: number;
};

/** A close pass answered (a `closePositions` effect, or a kill's close): `flat` when nothing but dust is left. */
export type CloseResult = {
  flat: boolean;
  orders: number;
  filledUsd: number;
  dust: number;
  /** why the pass did not finish: `post_only`, `open_orders`, `refused`, `unavailable`, `held` */
  refusal: string | null;
  detail?: string | undefined;
  /** the pass's orders as sent and answered (at most a bound; the audit trail keeps them) */
  reports?: readonly CloseReport[] | undefined;
  /** the positions left at the pass's last read ("BTC 0.25, ETH -3") */
  remaining?: string | undefined;
};

/** What the escalation is fed. */
export type EscalationInput =
  /** the switch started: a latch left by the last run is reported */
  | { type: "start" }
  | { type: "engine"; up: boolean; cause: EngineDownCause }
  /** the exposure poll's figures for this account */
  | { type: "exposure"; accountValue: number; notionalUsd: number; minLiquidationPct: number | null }
  /** the facts may have changed (an interval tick, the replicas' role): whether step 2 starts now */
  | { type: "check" }
  /** its wake-up is due */
  | { type: "due" }
  | ({ type: "closeResult" } & CloseResult)
  | { type: "reset"; by: string }
  | { type: "kill"; by: string; close: boolean };

export type EscalationMachine<M = unknown> = FeatureMachine<M, EscalationInput, EscalationConfig | null> & {
  /**
   * Whether a close order may leave now: null when it may, else why not. Asked synchronously before every close
   * order, on the switch's view as it is then.
   */
  closeHold(model: M, view: SwitchView): string | null;
};

// ------------------------------------------------------------------------------------------------ the drill

/** What the drill is fed. */
export type DrillInput =
  | { type: "start"; id: string; by: string }
  /** its resting order: placed (`oid`, `coin`) or not (null, `detail`) */
  | { type: "placed"; id: string; oid: number | null; coin: string | null; detail?: string | undefined }
  /** its push (the one the switch sent while `pushLeadMs` said so) was confirmed */
  | { type: "pushConfirmed"; cancelAt: number }
  /** its push failed: `outcomeUnknown` when it may have armed */
  | { type: "pushFailed"; cancelAt: number; outcomeUnknown: boolean; message: string }
  /** its wake-up is due */
  | { type: "due" }
  /** its order as read after its deadline */
  | {
      type: "verified";
      id: string;
      status: string | null;
      statusTimestamp: number | null;
      detail?: string | undefined;
    }
  /** the drill must end now (the engine went down, the daemon is stopping) */
  | { type: "end"; detail: string };

export type DrillMachine<M = unknown> = FeatureMachine<M, DrillInput, undefined> & {
  /** the switch's next push is the drill's, with this lead (ms); null: an ordinary push */
  pushLeadMs(model: M): number | null;
  /** the switch's pushes are held (from the drill's confirmed push until its verification) */
  holdsPushes(model: M): boolean;
};

/** The machines the app hands the switch. */
export type Features = { readonly escalation: EscalationMachine; readonly drill: DrillMachine };
