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
  /** EX_TEMPFAIL: another daemon holds the state directory's lock; try again when it has stopped. */
  tempFail: 75,
  config: 78,
});
export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];
