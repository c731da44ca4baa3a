/** The drill's model (machine.ts has the rules): the drill running, if any. */

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

/** No drill runs. */
export type DrillState = DrillModel | null;
