/**
 * What the switch says happened (src/switch/): typed domain events, one per fact, with the values it concerns and
 * nothing about wording. The machine (switch/machine.ts) emits them in its `Ready`, the driver (switch/driver.ts)
 * adds what it met carrying them out, and publishes each on the daemon's bus (core/events.ts) for its account.
 * Their log lines and metrics are the bus's subscribers in surface/ (surface/switch/); nothing here is text for
 * people. They live in core/ because their publisher (switch/) and their readers (surface/, app/) are rooms that
 * may not see each other.
 */

/** One proof a counted trigger carries (switch/ledger-schema.ts `TriggerProof`). */
export type TriggerProofKind = "limit_error" | "orders" | "record" | "guess";

/** Today's count split by proof (switch/ledger-model.ts `proofCounts`). */
export type ProofCounts = Record<TriggerProofKind | "unrecorded" | "assumed", number>;

export type SwitchEvent =
  // ---- inputs refused, clock
  | { type: "eventRefused"; eventType: string; reason: string }
  | { type: "dateRefused"; reason: string; date: number | null; detail: string }
  | { type: "clockCorrected"; correctionMs: number; verified: boolean }
  | {
      type: "clockSuspect";
      localMs: number;
      exchangeMs: number;
      disagreementMs: number;
      actOnMs: number;
      dayOnMs: number;
    }
  | { type: "clockAgreed"; localMs: number; exchangeMs: number; disagreementMs: number }
  | { type: "clockSourceSwitched"; reason: string; message: string; to: "local" | "exchange" }
  | { type: "clockVerified"; by: string; exchangeMs: number; localMs: number }
  | { type: "clockUnverified"; exchangeMs: number; localMs: number }
  | { type: "blockRefused"; reason: string; detail: string }
  | { type: "dayRepaired"; from: string; to: string; triggersToday: number }
  /** (issue 40) the time floor (the ledger's updatedAt) was ahead of the verified time: set back (ms) */
  | { type: "timeFloorRepaired"; from: number; to: number }
  | { type: "clockStepped"; deltaMs: number }
  | { type: "nonceRederived"; floor: number; reason: string }
  // ---- ledger and record
  | { type: "dayRolled"; from: string; to: string; previousTriggers: number }
  | { type: "pendingAtStart"; pendingUntil: number | null; confirmedUntil: number | null }
  | { type: "ledgerAssumed"; triggersToday: number; triggerLimit: number }
  | { type: "recordSkipped"; detail: string }
  | {
      type: "reconciled";
      changes: { field: string; from: unknown; to: unknown; reason: string }[];
      notes: string[];
      marginMs: number;
      proofs: ProofCounts;
    }
  | { type: "recordChecked"; notes: string[] }
  // ---- triggers
  | {
      type: "triggerCounted";
      triggersToday: number;
      triggerLimit: number;
      triggersLeft: number;
      deadline: number;
      /** the day of the ledger when the trigger is counted for a later day (`forDay`) */
      day: string;
      forDay?: string | undefined;
      detail?: string | undefined;
    }
  | { type: "triggerSkipped"; deadline: number; detail?: string | undefined }
  | { type: "triggersLow"; triggersToday: number; triggersLeft: number; triggerLimit: number }
  | { type: "limitSuspected"; triggersToday: number; triggerLimit: number; proofs: ProofCounts }
  | {
      type: "limitReached";
      triggersToday: number;
      triggerLimit: number;
      resumesAt: number;
      why: string;
      message?: string | undefined;
    }
  | { type: "limitReset"; day: string; triggersToday: number }
  // ---- pushes
  | { type: "pushConfirmed"; deadline: number; latencyMs: number; expedited: boolean }
  | {
      type: "pushFailed";
      reason: string;
      message: string;
      consecutiveFailures: number;
      /** a refusal (permanent or the daily limit): no retry is planned, no deadline shown */
      refused: boolean;
      retryInMs?: number | null | undefined;
      armedUntil?: number | null | undefined;
    }
  | { type: "recovered"; outageMs: number }
  | { type: "notProtected"; reason: string; message: string; recheckInMs: number }
  | {
      type: "agentInvalid";
      reason: string;
      state: "missing" | "expired";
      message?: string | undefined;
    }
  | { type: "protected"; previousReason: string; by: "exchange" | "agent" }
  /** the not-protected gauge for one reason (1 while not protected for it) */
  | { type: "notProtectedGauge"; reason: string; value: 0 | 1 }
  /** one of the account's gauges changed (each is published only when its value changed) */
  | { type: "gauge"; name: "armedUntil"; value: number | null }
  | { type: "gauge"; name: "triggersToday" | "triggersLeft"; value: number }
  | { type: "gauge"; name: "exhausted" | "halted"; value: boolean }
  | { type: "gauge"; name: "proof"; proof: keyof ProofCounts; value: number }
  // ---- engine
  | {
      type: "engineDown";
      action: "expedite" | "lapse" | "cancel";
      detail: string | null;
      armedUntil: number | null;
      /** `seen` its death, or `absent` past the connect grace after a restart (no close starts on that alone) */
      cause?: "seen" | "absent";
    }
  | {
      type: "engineUp";
      detail: string | null;
      /** the engine-down policy of the episode that ended */
      action: "expedite" | "lapse" | "cancel";
      /** `cancel` had confirmed a pass: the schedule was being renewed all along, only the passes end */
      renewing: boolean;
    }
  | {
      type: "ordersCancelled";
      pass: number;
      cancelled: number;
      kept: number;
      detail?: string | undefined;
      /** a further pass (not the first of the episode) */
      repeat: boolean;
    }
  /**
   * the pass was not confirmed and falls back to the 5 s minimum; `reason`: the failed request's kind
   * (`rate_limited`, ...) or `unconfirmed` (every request answered, orders still open); `retries`: the tries
   * again before it gave up; `weight`: the IP weight the last try spent
   */
  | {
      type: "cancelFailed";
      pass: number;
      cancelled: number;
      kept: number;
      detail?: string | undefined;
      reason: string;
      retries: number;
      weight?: number | undefined;
    }
  /**
   * the pass was refused (`reason`: rate_limited, a transient error) and is tried again in `retryInMs`; the
   * fall-back to the 5 s minimum comes only if it is still refused `giveUpInMs` from now
   */
  | {
      type: "cancelRetry";
      pass: number;
      attempt: number;
      reason: string;
      request: "read" | "cancel";
      retryInMs: number;
      giveUpInMs: number;
      cancelled: number;
      weight?: number | undefined;
      detail?: string | undefined;
    }
  // ---- escalation (src/escalation/)
  | {
      type: "escalated";
      rule: "engine_down" | "liquidation" | "drawdown" | "notional";
      reason: string;
      /** the lease's fencing token it was taken under (coordination.ts); absent without coordination */
      token?: string | undefined;
    }
  /**
   * the closes are held: a step-2 rule holds but this replica may not close (coordination.ts: said once per
   * reason), or the engine is back while the account is HALTED (src/escalation/: closes resume only when it is down
   * again and a rule holds)
   */
  | { type: "escalationHeld"; rule: string; reason: string; gate: string }
  /** a HALTED account's held closes resume: the engine is down again and a rule holds */
  | { type: "escalationResumed"; rule: string; reason: string; pass: number; held: string }
  /** start: the ledger holds a HALTED account with a close pass open when the daemon stopped */
  | { type: "closeStoppedAtRestart"; pass: number; since: number; reason: string; remaining: string }
  /** the operator's kill (src/escalation/ `escalationKill`): latched, the cancels (and the close) asked for */
  | {
      type: "killed";
      by: string;
      close: boolean;
      /** the kill latched the account (false: it was HALTED already) */
      latched: boolean;
      detail?: string | undefined;
      token?: string | undefined;
    }
  | { type: "killRefused"; by: string; reason: string }
  /** the kill's cancels answered (the confirming read included) */
  | {
      type: "killCancelled";
      by: string;
      confirmed: boolean;
      cancelled: number;
      kept: number;
      detail?: string | undefined;
    }
  | {
      type: "closeOrders";
      pass: number;
      token?: string | undefined;
      orders: readonly Readonly<Record<string, string | number | null>>[];
    }
  | { type: "closeDone"; pass: number; orders: number; filledUsd: number; flat: boolean; dust: number }
  | {
      type: "closeIncomplete";
      pass: number;
      orders: number;
      filledUsd: number;
      flat: boolean;
      refusal: string | null;
      detail: string | null;
      /** null: no retry (the engine is back, the daemon stopping): the closes are held */
      retryInMs: number | null;
    }
  | { type: "haltReleased"; by: string; since: number; reason: string; token?: string | undefined }
  // ---- drill (src/drill/)
  | { type: "drillRefused"; id: string; by: string; reason: string }
  | { type: "drillStarted"; id: string; by: string; triggersLeft: number; token?: string | undefined }
  | {
      type: "drillDone";
      id: string;
      by: string;
      fired: boolean;
      status: string | null;
      statusTimestamp: number | null;
      cancelAt: number | null;
      detail: string;
    }
  | { type: "resetRefused"; by: string; reason: string }
  // ---- shutdown
  /** `reason`: why a stop asked to remove kept the schedule (another replica alive, etcd unreachable) */
  | { type: "kept"; armedUntil: number | null; reason?: string | undefined }
  | { type: "removed"; previousDeadline: number | null; token?: string | undefined }
  | { type: "nothingArmed"; reason: string; message: string; belowVolumeGate: boolean }
  | { type: "removalSkipped"; reason: string; message: string }
  | { type: "removalFailed"; reason: string; message: string; armedUntil: number | null }
  // ---- the driver (switch/driver.ts): what it met carrying out a step, never a decision
  /** carrying out a part of a step (`effect`: an effect's kind, `persist`, `wake`, `publish ...`) threw; the switch goes on */
  | { type: "effectFailed"; effect: string; error: unknown }
  /** the push loop woke up `gapMs` late (host suspended or event loop blocked); its missed slots are skipped */
  | { type: "loopStalled"; loop: "push"; gapMs: number; expectedAt: number; intervalMs: number }
  /** a tick of the push loop threw */
  | { type: "tickFailed"; loop: "push"; error: unknown };

export type SwitchEventType = SwitchEvent["type"];

/** One switch event on the bus: the event, the module that publishes it and the account it concerns. */
export type SwitchPublished = SwitchEvent & { readonly module: "switch"; readonly account: string };
