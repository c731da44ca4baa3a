/**
 * The account an agent key trades for (docs/cli.md, "Agent keys"). With no --account / --vault, the daemon and
 * `schedule` act for the signer's own user; when the signer is an API (agent) wallet the exchange applies the push
 * to the agent's master (docs/exchange-behaviour.md §25), so logs, exposure, the budget and `schedule`'s
 * output must name the master, not the agent. The `userRole` info query says which master that is.
 */
import type { LoadedConfig } from "../config/load.js";
import { ConfigError } from "../config/load.js";
import type { Clock } from "../core/clock.js";
import { HyperliquidApiError } from "../protocol/hyperliquid/errors.js";
import { InfoClient } from "../protocol/hyperliquid/info.js";

export type SignerAccount =
  /** --account or --vault given: nothing asked */
  | { kind: "configured" }
  /** the signer is its own account (role user, vault, subAccount or missing) */
  | { kind: "self"; role: string }
  /** the signer is an agent of `master`; the accounts become [master] */
  | { kind: "agent"; master: string }
  /** the exchange could not be asked; the signer's own address is used, with a warning */
  | { kind: "unknown"; reason: string };

export async function resolveSignerAccount({
  config,
  signer,
  apiUrl,
  clock,
}: {
  config: LoadedConfig["config"];
  signer: string;
  apiUrl: string;
  clock: Clock;
}): Promise<SignerAccount> {
  const configured = config.accounts.length > 0 || config.vault !== undefined;
  // An account list that names the signer itself is asked about too: an agent's own address holds no orders, and a
  // push it signs protects its master, so `--account AGENT` would arm one account and report another.
  const namesSigner = config.accounts.includes(signer) || config.vault === signer;
  if (configured && !namesSigner) return { kind: "configured" };
  const info = new InfoClient({ apiUrl, clock, timeoutMs: config.requestTimeout, retryLimit: 1 });
  try {
    const role = await info.userRole({ user: signer });
    if (role.role === "agent") {
      const master = "data" in role && role.data && "user" in role.data ? role.data.user : undefined;
      if (configured)
        throw new ConfigError([
          `--account ${signer} is the signer itself, an API (agent) wallet${master ? ` of ${master}` : ""}: an agent ` +
            `holds no orders, and the scheduled cancel it signs is ${master ?? "its master"}'s. ` +
            `Give the account it trades for: --account ${master ?? "0xMASTER"} (or no --account at all)`,
        ]);
      if (!master)
        throw new ConfigError([
          `the signer ${signer} is an API (agent) wallet and the exchange names no master for it: ` +
            "give the account it trades for with --account 0xMASTER (or HL_ACCOUNTS)",
        ]);
      return { kind: "agent", master };
    }
    return configured ? { kind: "configured" } : { kind: "self", role: role.role };
  } catch (error) {
    if (error instanceof ConfigError) throw error;
    if (configured) return { kind: "configured" };
    const reason = error instanceof HyperliquidApiError ? error.shortMessage : (error as Error).message;
    return { kind: "unknown", reason };
  } finally {
    info.close();
  }
}

/** What the command does with the account: the words of its one line (each command says its own). */
export type SignerPurpose = "run" | "schedule" | "unschedule" | "check";

const DOING: Record<SignerPurpose, (master: string) => string> = {
  run: (m) => `keeping ${m}'s scheduled cancel armed (logs, exposure and the action budget are for ${m})`,
  schedule: (m) => `scheduling ${m}'s cancel`,
  unschedule: (m) => `removing ${m}'s scheduled cancel`,
  check: (m) => `run would keep ${m}'s scheduled cancel armed`,
};

/** The one log line (or output line) that says what was found. */
export function describeSignerAccount(
  signer: string,
  found: SignerAccount,
  purpose: SignerPurpose = "run",
): string | undefined {
  switch (found.kind) {
    case "agent":
      return (
        `the signer ${signer} is an API (agent) wallet of ${found.master}: ${DOING[purpose](found.master)}; ` +
        `pass --account ${found.master} to skip this look-up`
      );
    case "unknown":
      return (
        `could not ask the exchange whether the signer ${signer} is an API (agent) wallet (${found.reason}); ` +
        `${purpose === "check" ? "run would act" : "acting"} as the signer's own account. With an agent key, pass --account 0xMASTER`
      );
    default:
      return undefined;
  }
}
