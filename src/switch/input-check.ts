/**
 * The switch's input check: an event (or a time) the machine cannot take is refused with a reason before any
 * decision is taken on it (machine.ts `step`), so a malformed input never reaches the phase's step.
 */
import { membersWellFormed } from "./coordination.js";
import type { Event, Now } from "./model.js";

/** Whether every value is a finite number. */
export const finite = (...xs: unknown[]) => xs.every((x) => typeof x === "number" && Number.isFinite(x));

/** Why `event` (or `now`) cannot be taken, or null. Values the machine judges itself (a Date) are not checked. */
export function malformed(event: Event, now: Now): string | null {
  if (now === null || typeof now !== "object" || !finite(now.mono))
    return "the monotonic time is not a number";
  if (event === null || typeof event !== "object") return "not an event";
  switch (event.type) {
    case "start":
    case "tick":
    case "wake":
    case "dayRollover":
    case "shutdown":
    case "removalConfirmed":
    case "removalFailed":
    case "halt":
    case "engine":
    case "agent":
    case "ordersCancelled":
    case "pushFailed":
    case "closeResult":
      return null;
    case "kill":
      return typeof event.by === "string" && event.by.length <= 200 && typeof event.close === "boolean"
        ? null
        : "the kill names nobody";
    case "killCancelled":
      return typeof event.by === "string" && finite(event.cancelled, event.kept)
        ? null
        : "the kill's cancel figures are not numbers";
    case "coordination":
      return (event.role === "leader" || event.role === "follower" || event.role === "lost") &&
        (event.token === null || (typeof event.token === "string" && event.token.length <= 40)) &&
        (event.othersAlive === null || typeof event.othersAlive === "boolean") &&
        membersWellFormed(event.members)
        ? null
        : "the coordination's role, token or candidates are malformed";
    case "exposure":
      return finite(event.accountValue, event.notionalUsd) &&
        (event.minLiquidationPct === null || finite(event.minLiquidationPct))
        ? null
        : "the exposure figures are not numbers";
    case "reset":
      return typeof event.by === "string" && event.by.length <= 200 ? null : "the reset names nobody";
    case "drillStart":
      return typeof event.id === "string" && event.id.length <= 64 && typeof event.by === "string"
        ? null
        : "the drill has no id";
    case "drillPlaced":
      return typeof event.id === "string" && (event.oid === null || finite(event.oid))
        ? null
        : "the drill's order id is not a number";
    case "drillVerified":
      return typeof event.id === "string" && (event.statusTimestamp === null || finite(event.statusTimestamp))
        ? null
        : "the drill's order status time is not a number";
    case "syncFailed":
      return finite(event.id) ? null : "the push id is not a number";
    case "persisted":
      return finite(event.seq) && (event.updatedAt === null || finite(event.updatedAt))
        ? null
        : "the write's number or updatedAt is not a number";
    case "pushConfirmed":
      return finite(event.id, event.latencyMs) ? null : "the push id or latency is not a number";
    case "clockSample":
      return typeof event.date === "number" ? null : "the Date sample is not a number";
    case "blockSample":
      return typeof event.timestampSec === "number" ? null : "the block timestamp is not a number";
    case "clockStep":
      return finite(event.deltaMs) ? null : "the clock step is not a number";
    case "record": {
      const e = event.evidence;
      if (e === null) return null;
      return e !== undefined &&
        typeof e === "object" &&
        Number.isFinite(e.at) &&
        Array.isArray(e.schedules) &&
        Array.isArray(e.fires) &&
        (e.newestTx === null || Number.isFinite(e.newestTx))
        ? null
        : "the record is malformed";
    }
    default:
      return `unknown event type ${JSON.stringify((event as { type?: unknown }).type)?.slice(0, 40)}`;
  }
}
