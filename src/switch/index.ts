/**
 * The switch for one account: the pure machine (switch/machine.ts) and its driver (switch/driver.ts).
 * Timeline, states, events and rules: docs/daemon.md "The switch machine".
 */
export {
  type CancelOpenOrders,
  type CloseOrderReport,
  type ClosePositions,
  type CreateSwitchParameters,
  createSwitch,
  type ScheduleCancelClient,
  type Switch,
  type SwitchAccount,
  type SwitchInput,
  type SwitchIo,
  type SwitchPolicy,
  type SwitchRuntime,
} from "./driver.js";
export { describeFailure } from "./failure.js";
export {
  BACKOFF_BASE_MS,
  EXPEDITE_LEAD_MS,
  EXPIRY_MARGIN_MS,
  RATE_LIMIT_BACKOFF_BASE_MS,
  type ShutdownOutcome,
  VOLUME_GATE_USD,
} from "./machine.js";
