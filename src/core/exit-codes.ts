/** Exit codes of the operator contract (docs/cli.md, "Exit codes"); sysexits.h values. */
export const ExitCode = Object.freeze({
  ok: 0,
  runtime: 1,
  usage: 2,
  /** EX_DATAERR: a file's content is wrong (`audit verify` found a broken chain). */
  dataErr: 65,
  /** EX_NOINPUT: an input named on the command line does not exist (`status` on a missing state directory). */
  noInput: 66,
  unavailable: 69,
  /**
   * EX_CANTCREAT: the state directory cannot be created or written, or is not the daemon's own (another owner,
   * writable by others); `run` stops at start rather than run without its ledger or its lock.
   */
  cantCreat: 73,
  /**
   * EX_NOPERM: the command would take something the operator did not grant: `drill` while reduce-only stops rest,
   * without `--cancel-stops` (the fire cancels them too).
   */
  noPerm: 77,
  /** EX_TEMPFAIL: another daemon holds the state directory's lock; try again when it has stopped. */
  tempFail: 75,
  config: 78,
});
export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];
