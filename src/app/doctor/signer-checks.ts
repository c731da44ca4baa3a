/**
 * `doctor`'s checks of a signer (docs/cli.md, "doctor"): what it is at the exchange (`userRole`), the accounts `run`
 * would arm for it (found as `run` finds them), the network's proof (`--probe`: one signed `noop`, the only check
 * that sends anything) and an agent key's expiry (through the daemon's own agent watch).
 */
import { ConfigError } from "../../config/errors.js";
import type { Config } from "../../config/schema.js";
import type { Clock } from "../../core/clock.js";
import { formatDuration } from "../../core/duration.js";
import { ExitCode } from "../../core/exit-codes.js";
import type { Logger } from "../../core/logger.js";
import { redactUrl } from "../../core/redact.js";
import { createRuntime, systemTimers } from "../../core/runtime.js";
import { HyperliquidApiError } from "../../protocol/hyperliquid/errors.js";
import type { ExchangeClient } from "../../protocol/hyperliquid/exchange.js";
import type { InfoClient } from "../../protocol/hyperliquid/info.js";
import type { UserRole } from "../../protocol/hyperliquid/schemas.js";
import { createAgentWatch } from "../../watchers/agent-watch.js";
import { planAccounts } from "../daemon.js";
import { resolveSignerAccount, type SignerAccount } from "../master.js";
import { type CheckResult, exchangeCode, fail, ok, reasonOf, warn } from "./report.js";

/** The signer's role at the exchange (`userRole`): master (user), agent of whom, vault, subaccount, or unknown. */
export function roleRow(signer: string, role: UserRole | { role: string }): CheckResult {
  switch (role.role) {
    case "agent": {
      const master = "data" in role && role.data && "user" in role.data ? role.data.user : undefined;
      return ok(
        "role",
        null,
        `the signer ${signer} is an API (agent) wallet of ${master ?? "an unnamed master"}`,
      );
    }
    case "user":
      return ok(
        "role",
        null,
        `the signer ${signer} is a user's own key (a master)`,
        "a dedicated API (agent) wallet is the recommended key for the daemon (docs/operations.md, Keys)",
      );
    case "subAccount": {
      const master = "data" in role && role.data && "master" in role.data ? ` of ${role.data.master}` : "";
      return ok("role", null, `the signer ${signer} is a subaccount${master}`);
    }
    case "vault":
      return ok("role", null, `the signer ${signer} is a vault`);
    default:
      return fail(
        "role",
        null,
        `the exchange knows no user or API wallet ${signer} (role "${role.role}")`,
        "an expired or deregistered agent, an account never funded, or the other network (--network): approve a new agent or check the key",
        ExitCode.config,
      );
  }
}

/** Asks `userRole` (60 IP weight) and judges it; a failed read fails the row with the transport's code. */
export async function checkRole(
  info: Pick<InfoClient, "userRole">,
  signer: string,
): Promise<{ row: CheckResult; master: string | undefined }> {
  try {
    const role = await info.userRole({ user: signer });
    const master = role.role === "agent" && "data" in role && role.data ? role.data.user : undefined;
    return { row: roleRow(signer, role), master };
  } catch (error) {
    return {
      master: undefined,
      row: fail(
        "role",
        null,
        `userRole of ${signer} could not be read: ${reasonOf(error)}`,
        "check --api-url and the network",
        exchangeCode(error),
      ),
    };
  }
}

/** The account plan `run` would arm for this signer: resolveSignerAccount, then planAccounts, exactly as `run`. */
export async function checkPlan(p: { config: Config; signer: string; apiUrl: string; clock: Clock }): Promise<
  | {
      rows: CheckResult[];
      plan: Array<{ account: string; vaultAddress: string | undefined }>;
      /** what resolveSignerAccount found: the role when it asked (no --account, or one naming the signer) */
      found: SignerAccount;
    }
  | { rows: CheckResult[]; plan: null }
> {
  let config = p.config;
  try {
    const found = await resolveSignerAccount(p);
    if (found.kind === "agent") config = { ...config, accounts: [found.master] };
    const plan = planAccounts(config, p.signer);
    const rows = plan.map(({ account, vaultAddress }) =>
      found.kind === "unknown"
        ? warn(
            "account",
            account,
            `run would arm ${account}, the signer's own address: whether the signer is an agent could not be asked (${found.reason})`,
            "with an agent key, pass --account 0xMASTER",
          )
        : ok(
            "account",
            account,
            `run arms ${account}${vaultAddress ? " (sent as vaultAddress)" : ""}${found.kind === "agent" ? `, the master of the agent ${p.signer}` : ""}`,
          ),
    );
    return { rows, plan, found };
  } catch (error) {
    // The agent given as its own --account, or an agent the exchange names no master for: `run` exits 78.
    if (error instanceof ConfigError)
      return {
        plan: null,
        rows: [
          fail(
            "account",
            p.config.vault ?? p.config.accounts[0] ?? p.signer,
            error.issues.join("; ") || reasonOf(error),
            "give the master's address as --account (or none): an agent holds no orders",
            ExitCode.config,
          ),
        ],
      };
    throw error;
  }
}

/**
 * The network, proven by one signed `noop` (`--probe`): the exchange recovers the signer from the signature over
 * the chain it runs; a refusal naming another address means the signature was made for the other network (or with
 * another key). Without --probe nothing is sent and the row says so.
 */
export async function probeNetwork(
  exchange: Pick<ExchangeClient, "noop"> | null,
  signer: string,
  network: Config["network"],
  apiUrl: string,
): Promise<{ row: CheckResult; sentAt: number | null }> {
  if (!exchange)
    return {
      sentAt: null,
      row: warn(
        "network",
        null,
        `not proven: only a signed action shows which chain ${redactUrl(apiUrl)} recovers signatures on`,
        "hl-deadman doctor --probe sends one noop (it changes nothing but one unit of the address budget)",
      ),
    };
  try {
    const r = await exchange.noop();
    return {
      sentAt: r.nonce,
      row: ok(
        "network",
        null,
        `a signed noop was accepted: ${redactUrl(apiUrl)} recovers ${signer} on ${network}`,
      ),
    };
  } catch (error) {
    if (error instanceof HyperliquidApiError && error.hint)
      return {
        sentAt: null,
        row: fail(
          "network",
          null,
          `wrong network: ${error.hint}`,
          `use --network ${network === "mainnet" ? "testnet" : "mainnet"} or an API URL of ${network}`,
          ExitCode.config,
        ),
      };
    if (error instanceof HyperliquidApiError && /does not exist/i.test(error.serverMessage ?? ""))
      return {
        sentAt: null,
        row: fail(
          "network",
          null,
          `the exchange recovered ${signer} but knows no such user or API wallet: ${error.serverMessage}`,
          "approve the key as an API wallet of the master (or fund the account) on this network",
          ExitCode.config,
        ),
      };
    return {
      sentAt: null,
      row: fail(
        "network",
        null,
        `the noop failed: ${reasonOf(error)}`,
        "check --api-url",
        exchangeCode(error),
      ),
    };
  }
}

/** The agent's expiry (`extraAgents`, through the daemon's own agent watch); a master's own key has none. */
export async function checkAgent(p: {
  info: Pick<InfoClient, "extraAgents" | "userRole">;
  signer: string;
  master: string;
  warnDays: number;
  clock: Clock;
  logger: Logger;
}): Promise<CheckResult> {
  if (p.signer === p.master)
    return ok("agent", p.master, "the signer is the account's own key: no agent expiry to watch");
  const runtime = createRuntime({ clock: p.clock, timers: systemTimers() });
  try {
    const watch = createAgentWatch({
      info: p.info,
      account: p.master,
      signer: p.signer,
      runtime,
      warnDays: p.warnDays,
      intervalMs: 0,
      onAgentState: () => {},
    });
    const state = await watch.checkNow();
    if (state === null)
      return fail(
        "agent",
        p.master,
        `extraAgents of ${p.master} could not be read`,
        "check --api-url",
        ExitCode.unavailable,
      );
    if (state.state !== "ok")
      return fail(
        "agent",
        p.master,
        `${state.state}: ${state.detail}`,
        "approve a new agent and give its key",
        ExitCode.config,
      );
    if (state.validUntil === null)
      return ok("agent", p.master, `the signer is an API wallet of ${p.master} (unnamed: no expiry listed)`);
    const left = state.validUntil - p.clock.now();
    const until = `${new Date(state.validUntil).toISOString()} (in ${formatDuration(left)})`;
    return left < p.warnDays * 86_400_000
      ? warn(
          "agent",
          p.master,
          `the API wallet ${p.signer} expires ${until}`,
          `approve a new agent before then (agentWarnDays ${p.warnDays})`,
        )
      : ok("agent", p.master, `the API wallet ${p.signer} is valid until ${until}`);
  } finally {
    runtime.abort("doctor");
  }
}
