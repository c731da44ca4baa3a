/**
 * The checks `doctor` runs, in its report's order, with what each asks in one line: `doctor --help` lists them, and
 * docs/cli.md's table names the same checks (test/cli/doctor-help.test.ts keeps the three in step).
 */
export const DOCTOR_CHECKS: readonly { check: string; asks: string }[] = Object.freeze([
  { check: "state-dir", asks: "the state directory can be created or written and is the daemon's own" },
  { check: "lock", asks: "no running daemon holds the state directory" },
  { check: "health", asks: "the --health address can be bound" },
  { check: "guard", asks: "the engine guard is configured and the engine alive by it" },
  { check: "key", asks: "the key loads, safely stored; not the simulator's demo key off the simulator" },
  { check: "role", asks: "what the signer is (a user, an agent of whom, a vault)" },
  { check: "account", asks: "what run would arm, found as run finds it" },
  { check: "network", asks: "--probe only: a signed noop accepted on this network" },
  { check: "clock", asks: "the exchange's time against the local clock" },
  {
    check: "clock-witness",
    asks: "the HyperEVM block time against the Date: the exchange's time verified, the local clock within 5 s",
  },
  { check: "agent", asks: "an agent key's approval: not expired, not expiring soon" },
  { check: "volume", asks: "the exchange's $1,000,000 traded-volume requirement" },
  { check: "budget", asks: "the address's action budget left at this --interval" },
  { check: "explorer", asks: "the explorer answers (with --probe: lists the probe)" },
  { check: "weight", asks: "the IP's weight the configuration spends a minute" },
]);

/** `doctor --help`'s closing text: the checks, then the exit codes and their order of severity. */
export function doctorHelpText(): string {
  const width = Math.max(...DOCTOR_CHECKS.map((c) => c.check.length));
  return [
    "",
    "Checks (one row per check per account; ok, warn or FAIL):",
    ...DOCTOR_CHECKS.map((c) => `  ${c.check.padEnd(width)}  ${c.asks}`),
    "",
    "Exit codes (the most severe failure wins, in this order; warnings never fail):",
    "  78  configuration: the key, the account, the network, the agent, the weight",
    "  73  the state directory cannot be used",
    "   1  what the exchange would refuse (volume, budget) or a clock the switch distrusts",
    "  69  unreachable: the exchange, the explorer, the health port, the engine",
    "  75  another daemon holds the state directory",
    "   0  every check passes",
    "",
    'docs/cli.md, "doctor", says what each check asks and how it fails.',
  ].join("\n");
}
