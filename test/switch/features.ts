/** The switch's features as the app hands them (src/app/parts/switches.ts): the tests construct the switch the same way. */
import type { Features } from "../../src/core/feature.js";
import type { DrillModel } from "../../src/drill/index.js";
import { drill } from "../../src/drill/index.js";
import { type EscalationModel, escalation } from "../../src/escalation/index.js";
import type { SwitchModel } from "../../src/switch/machine.js";

export const FEATURES: Features = Object.freeze({ escalation, drill });

/** The escalation's model in a switch's model (its opaque slot). */
export const escOf = (m: SwitchModel) => m.features.escalation.model as EscalationModel;
/** The drill running in a switch's model, or null. */
export const drillOf = (m: SwitchModel) => m.features.drill.model as DrillModel | null;
/** The features' wake-ups (the escalation's time rule and retries, the drill's verification). */
export const wakeOf = (m: SwitchModel) => ({
  escalate: m.features.escalation.wakeAt,
  drill: m.features.drill.wakeAt,
});
