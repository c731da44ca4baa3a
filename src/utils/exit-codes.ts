/** Exit codes of the operator contract (docs/cli-contract.md, "Exit codes"); sysexits.h values. */
export const ExitCode = Object.freeze({
  ok: 0,
  runtime: 1,
  usage: 2,
  unavailable: 69,
  config: 78,
});
export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];
