/**
 * A step's Ready as the switch's table tests read it: its effects (src/switch/ready.ts `Effect`, a list of tagged
 * effects, one per slot) seen as one optional field per kind: `send` (a push or the removal), `cancelOrders`,
 * `closePositions` (the escalation's pass or the kill's own), `kill`, the drill's, `readRecord`, `nonceFloor` and
 * `pollExposure`. Reading only: the machine's output is the list. `stepView` is the machine's `step` read so.
 */
import { type Event, type Now, type SwitchModel, step } from "../../src/switch/machine.js";
import type { ClosePass, Effect, EffectOf, Ready, Send } from "../../src/switch/model.js";

type Fields<K extends Effect["kind"]> = Omit<EffectOf<K>, "kind">;

export type ReadyView = Ready & {
  send?: Send | undefined;
  cancelOrders?: Fields<"cancelOrders"> | undefined;
  closePositions?: ClosePass | undefined;
  kill?: { by: string } | undefined;
  drillPlace?: Fields<"drillPlace"> | undefined;
  drillVerify?: Fields<"drillVerify"> | undefined;
  drillCancel?: Fields<"drillCancel"> | undefined;
  readRecord?: Fields<"readRecord"> | undefined;
  nonceFloor?: Fields<"nonceFloor"> | undefined;
  pollExposure?: boolean | undefined;
};

export function view(ready: Ready): ReadyView {
  const v: ReadyView = { ...ready };
  for (const e of ready.effects) {
    const { kind, ...fields } = e;
    if (e.kind === "push" || e.kind === "removal") v.send = e;
    else if (e.kind === "kill") {
      v.kill = { by: e.by };
      if (e.close) v.closePositions = e.close;
    } else if (e.kind === "pollExposure") v.pollExposure = true;
    else (v as Record<string, unknown>)[kind] = fields;
  }
  return v;
}

/** One step's result with its Ready read field by field. */
export type StepView = { model: SwitchModel; ready: ReadyView };

/** The machine's `step`, its Ready read field by field. */
export function stepView(model: SwitchModel, event: Event, now: Now): StepView {
  const r = step(model, event, now);
  return { model: r.model, ready: view(r.ready) };
}
