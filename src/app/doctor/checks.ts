/**
 * `doctor`'s checks (docs/cli.md, "doctor"): each a small function that asks one question and returns its rows
 * (src/app/doctor/report.ts), never throws for what it finds, and changes nothing — except `probeNetwork`, which
 * sends one signed `noop` when `--probe` asks for it. They reuse the daemon's own pieces: the weight arithmetic
 * (src/config/weight.ts), the account plan (planAccounts, resolveSignerAccount), the agent watch, the budget's
 * arithmetic, the switch's model of the exchange's time, the guard and the state-directory lock.
 *
 * This is their one list, the one the report (./index.ts) runs from: each group of checks lives in its own file
 * (the host's, the signer's, each account's), a new check in a file of its own, named here.
 */
export { checkBudget, checkExplorer, checkVolume } from "./account-checks.js";
export { checkClockWitness } from "./clock-witness.js";
export {
  canListen,
  checkClock,
  checkGuard,
  checkHealth,
  checkLock,
  checkStateDir,
  checkWeight,
  lockView,
  STATE_FREE_FAIL_BYTES,
  STATE_FREE_WARN_BYTES,
} from "./host-checks.js";
export { reasonOf } from "./report.js";
export { checkAgent, checkPlan, checkRole, probeNetwork, roleRow } from "./signer-checks.js";
