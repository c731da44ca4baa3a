/**
 * The switch's typed events live in core/ (core/switch-events.ts), where the rooms that read them can see them;
 * the machine's files name them from here.
 */
export type { ProofCounts, SwitchEvent, SwitchEventType } from "../core/switch-events.js";
