/** The drill's part of the switch's model (drill.ts has the rules). */

export type DrillModel = {
  id: string;
  by: string;
  phase: "placing" | "arming" | "firing" | "verifying";
  /** the drill's resting order, once placed */
  oid: number | null;
  coin: string | null;
  /** the drill's push's cancel time, once confirmed */
  cancelAt: number | null;
  startedAt: number;
};
