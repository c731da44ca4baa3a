/**
 * The switch's side of its features (the escalation, the drill: core/feature.ts has the contract, the app hands
 * the machines in `SwitchConfig.features`): the view each decides on (`viewOf`, the switch's facts as they are at
 * the step), one step of a feature on its slot of the model (`escalation`, `drill`), and its commands carried out as
 * the switch's `Decision` (context.ts), one row per kind (`CARRY`), as the driver's effects are (effects.ts). The
 * switch keeps each feature's model opaque (model.ts `FeatureSlots`) and never imports a feature.
 */
import type {
  DrillInput,
  EscalationInput,
  FeatureCommand,
  FeatureStatus,
  FeatureStep,
  HaltedLatch,
  SwitchView,
} from "../core/feature.js";
import { andThen, type Decision, merge } from "./context.js";
import { gateRefusal, gateToken } from "./coordination.js";
import type { Times } from "./exchange-time.js";
import type { LedgerEntry } from "./ledger.js";
import type { FeatureName, FeatureSlot, FeatureSlots, Now, SwitchModel } from "./model.js";
import { checkLapse, ownFire } from "./triggers.js";

/** The switch's facts a feature decides on, as they are now (core/feature.ts `SwitchView`). */
export function viewOf(m: SwitchModel): SwitchView {
  return {
    running: m.phase.name === "running",
    state: m.state,
    engineUp: m.engineUp,
    halted: m.entry.halted ?? null,
    gate: gateRefusal(m),
    token: gateToken(m),
    coordinated: m.coord.role !== "none",
    othersAlive: m.coord.othersAlive,
    triggersLeft: m.entry.limit - m.entry.triggersToday,
  };
}

/** The entry with the HALTED latch `latch` (null: released, the field gone). */
function withHalted(entry: LedgerEntry, latch: HaltedLatch | null): LedgerEntry {
  if (latch !== null) return { ...entry, halted: latch };
  const { halted: _released, ...rest } = entry;
  return rest;
}

type Carry<K extends FeatureCommand["kind"]> = (
  m: SwitchModel,
  now: Now,
  times: Times,
  c: Extract<FeatureCommand, { kind: K }>,
) => Decision;

/** How the switch carries out each command a feature returns: one row per kind (core/feature.ts). */
const CARRY: { readonly [K in FeatureCommand["kind"]]: Carry<K> } = {
  halted: (m, _now, _times, c) => ({
    set: { entry: withHalted(m.entry, c.latch) },
    ...(c.write === "sync" ? { sync: true } : c.write === "persist" ? { persist: true } : {}),
  }),
  push: (_m, _now, _times, c) => ({ push: c.reason }),
  ownFire: (m, now, _times, c) => ownFire(m, now, c.cancelAt, c.oid),
  checkLapse: (m, now, times) => checkLapse(m, now, times),
  effect: (_m, _now, _times, c) => ({ effects: [c.effect] }),
  event: (_m, _now, _times, c) => ({ events: [c.event] }),
};

/** Commands that only add to the step (no model read): merged rather than decided on the model they leave. */
const ADDS: ReadonlySet<FeatureCommand["kind"]> = new Set(["push", "effect", "event"]);

/**
 * A feature's step as the switch's decision: its slot (model, wake-up) set first, then each command carried out
 * on the model the ones before it leave.
 */
function decide(
  m: SwitchModel,
  now: Now,
  times: Times,
  name: FeatureName,
  r: FeatureStep<unknown>,
): Decision {
  const slot = m.features[name];
  const wakeAt = r.wakeAt === undefined ? slot.wakeAt : r.wakeAt;
  let d: Decision =
    r.model === slot.model && wakeAt === slot.wakeAt
      ? {}
      : { set: { features: { ...m.features, [name]: { model: r.model, wakeAt } } } };
  for (const c of r.commands) {
    const carry = CARRY[c.kind] as Carry<typeof c.kind>;
    d = ADDS.has(c.kind) ? merge(d, carry(m, now, times, c)) : andThen(m, d, (x) => carry(x, now, times, c));
  }
  return d;
}

const featureNow = (now: Now) => ({ mono: now.mono, wall: now.wall });

/** One input of the escalation (src/escalation/), decided on the switch's model as it is. */
export function escalation(m: SwitchModel, now: Now, times: Times, input: EscalationInput): Decision {
  const slot = m.features.escalation;
  const r = m.cfg.features.escalation.step(
    slot.model,
    viewOf(m),
    input,
    featureNow(now),
    m.cfg.escalation ?? null,
  );
  return decide(m, now, times, "escalation", r);
}

/** One input of the drill (src/drill/), decided on the switch's model as it is. */
export function drill(m: SwitchModel, now: Now, times: Times, input: DrillInput): Decision {
  const r = m.cfg.features.drill.step(m.features.drill.model, viewOf(m), input, featureNow(now), undefined);
  return decide(m, now, times, "drill", r);
}

/** Whether a close order may leave now (null) or why not: the escalation's, on the switch as it is now. */
export const closeHold = (m: SwitchModel): string | null =>
  m.cfg.features.escalation.closeHold(m.features.escalation.model, viewOf(m));

/** The pushes are held for a feature (the drill, from its confirmed push until its verification). */
export const featuresHoldPushes = (m: SwitchModel): boolean =>
  m.cfg.features.drill.holdsPushes(m.features.drill.model);

/** The next push is a feature's (the drill's), with this lead (ms); null: an ordinary push. */
export const featurePushLead = (m: SwitchModel): number | null =>
  m.cfg.features.drill.pushLeadMs(m.features.drill.model);

/** The wake-ups of the features due at `mono`, in the order they are taken (the drill's, then the escalation's). */
export const FEATURE_WAKE_ORDER: readonly FeatureName[] = ["drill", "escalation"];

/** A feature's wake-up is due: cleared, then the feature is told (`due`). */
export function featureDue(m: SwitchModel, now: Now, times: Times, name: FeatureName): Decision {
  const slot: FeatureSlot = m.features[name];
  const cleared: FeatureSlots = { ...m.features, [name]: { ...slot, wakeAt: null } };
  return andThen(m, { set: { features: cleared } }, (c) =>
    name === "drill" ? drill(c, now, times, { type: "due" }) : escalation(c, now, times, { type: "due" }),
  );
}

/** What the features add to the status (the HALTED latch's closes, the drill). */
export function featureStatus(m: SwitchModel): FeatureStatus {
  const view = viewOf(m);
  return {
    ...m.cfg.features.escalation.status(m.features.escalation.model, view),
    ...m.cfg.features.drill.status(m.features.drill.model, view),
  };
}
