/**
 * The operator's commands to one switch (`hl-deadman kill`, `reset`, `drill`, over the control channel): each is
 * one event stepped through the machine, and its answer is one of that step's own events (never a guess of the
 * driver's). A kill answers once its cancels (and its close) have: the effects report them (`killed`), in the order
 * the kills were asked.
 */
import type { SwitchEvent } from "../core/switch-events.js";
import type { KillOutcome, SwitchAnswers } from "./api.js";
import type { Killed } from "./effects.js";
import type { Event } from "./model.js";

/** One event stepped and its Ready carried out; the first of the step's events among `answers`, if any. */
export type Ask = <T extends SwitchEvent["type"]>(
  event: Event,
  answers?: readonly T[],
) => Extract<SwitchEvent, { type: T }> | undefined;

const NO_ANSWER = "the switch did not answer";

export function operatorCommands(ask: Ask) {
  /** The kills waiting for their cancels (and close) to answer, in the order they were asked. */
  const killWaiters: ((r: Killed) => void)[] = [];
  return {
    /** a kill's cancels (and close) answered (the `kill` effect, effects.ts) */
    killed: (r: Killed) => killWaiters.shift()?.(r),
    drill(id: string, by: string): SwitchAnswers["drill"] {
      const e = ask({ type: "drillStart", id, by }, ["drillStarted", "drillRefused"]);
      if (e?.type === "drillStarted") return { started: true };
      return { started: false, reason: e?.type === "drillRefused" ? e.reason : NO_ANSWER };
    },
    kill(by: string, close: boolean): Promise<KillOutcome> {
      return new Promise<KillOutcome>((resolve) => {
        let latched = false;
        const waiter = (r: Killed) => resolve({ done: true, latched, ...r });
        killWaiters.push(waiter);
        const e = ask({ type: "kill", by, close }, ["killed", "killRefused"]);
        if (e?.type === "killed") {
          latched = e.latched;
          return;
        }
        killWaiters.splice(killWaiters.indexOf(waiter), 1);
        resolve({ done: false, reason: e?.type === "killRefused" ? e.reason : NO_ANSWER });
      });
    },
    reset(by: string): SwitchAnswers["reset"] {
      const e = ask({ type: "reset", by }, ["haltReleased", "resetRefused"]);
      if (e?.type !== "haltReleased")
        return { released: false, reason: e?.type === "resetRefused" ? e.reason : NO_ANSWER };
      return {
        released: true,
        reason: `released (HALTED since ${new Date(e.since).toISOString()}: ${e.reason})`,
      };
    },
  };
}
