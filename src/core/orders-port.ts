/**
 * The orders the daemon takes away or places when a machine asks (the ports): cancel an account's open orders,
 * close its positions reduce-only, the drill's three requests. The machines (src/switch/) ask for them through
 * these types; the executors (src/orders/) carry them out against the exchange. Both import them from here, so
 * neither imports the other.
 */

/** The request of a pass that failed, as the switch judges it (src/switch/engine-down.ts decides what follows). */
export type CancelFailure = {
  /** the error policy's kind (`rate_limited` for HTTP 429, `server_error`, `transport`, ...), `internal` if none */
  kind: string;
  /** a read (the open orders, `meta`) or a cancel action */
  request: "read" | "cancel";
  /** the policy table says a new request may help */
  retryable: boolean;
};

/** What a cancel pass answers (src/protocol/hyperliquid/cancel.ts carries one out). */
export type CancelPassResult = {
  confirmed: boolean;
  cancelled: number;
  kept: number;
  detail?: string;
  /** not confirmed: the first request that failed (none when every request was answered); the machine judges whether the pass is tried again */
  failure?: CancelFailure;
  /** not confirmed: the IP weight the pass spent */
  weight?: number;
};

export type CancelOpenOrders = (params: {
  account: string;
  vaultAddress?: string;
  cancelStops: boolean;
  /** only these perp dexes (a fire's sweep); default every listed dex (`--dex`) */
  dexes?: readonly string[] | undefined;
}) => Promise<CancelPassResult>;

/** One close order of an escalation pass, as sent and as answered (the audit trail keeps them). */
export type CloseOrderReport = {
  coin: string;
  side: "buy" | "sell";
  /** the size and limit price sent (wire strings) */
  size: string;
  price: string;
  /** resting, filled, partly filled, expired (an IOC not filled), refused */
  status: string;
  filledSize: string;
  avgPrice: string | null;
  oid: number | null;
  error: string | null;
};

/**
 * Escalation step 2: cancels the account's open orders, then closes its positions with reduce-only IOC orders in
 * slices, re-reading the positions between slices. Never throws: a failure is `flat: false` with the refusal.
 */
export type ClosePositions = (params: {
  account: string;
  vaultAddress?: string;
  pass: number;
  /**
   * asked before EVERY order the pass sends (the cancels first included): null when it may leave, else why not,
   * and the pass ends there (`refusal` "held"). The driver answers from the machine's model as it is then
   * (src/escalation/ `closeHold`): the engine back stops a pass in flight at its next step.
   */
  mayProceed?: (() => string | null) | undefined;
}) => Promise<CloseOutcome>;

export type CloseOutcome = {
  flat: boolean;
  orders: CloseOrderReport[];
  filledUsd: number;
  dust: number;
  refusal: string | null;
  detail?: string;
  /** the positions left at the pass's last read ("BTC 0.25, ETH -3"), "" when flat or unread */
  remaining?: string;
};

/**
 * The drill's three requests (src/drill/ decides when; src/orders/drill-io.ts carries them out): place its
 * resting order, read its status after the drill's deadline, cancel it when the drill ends without the exchange
 * having done so. Never throws: a failure is an answer with its reason.
 */
export type DrillIo = {
  place(p: {
    account: string;
    vaultAddress?: string | undefined;
  }): Promise<{ oid: number; coin: string; price: string; size: string } | { error: string }>;
  status(p: { account: string; vaultAddress?: string | undefined; oid: number }): Promise<{
    status: string | null;
    statusTimestamp: number | null;
    detail?: string;
  }>;
  cancel(p: { account: string; vaultAddress?: string | undefined; oid: number; coin: string }): Promise<void>;
};
