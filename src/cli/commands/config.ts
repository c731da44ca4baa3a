import { type Command, Option } from "commander";
import type { SignerAccount } from "../../app/master.js";
import { CONFIG_KEYS, configJsonSchema, effectiveUrls, loadConfig } from "../../config/load.js";
import { deathRoom, describeDeathRoom, describeWeightPlan, weightPlan } from "../../config/weight.js";
import { formatDuration } from "../../core/duration.js";
import { redactUrl } from "../../core/redact.js";
import type { CliDeps } from "../deps.js";
import { stateDirOf } from "../state-dir.js";
import { addRunOptions } from "./run.js";

const DURATION_KEYS = new Set(CONFIG_KEYS.filter((s) => s.kind === "duration").map((s) => s.key));

export function registerConfig(program: Command, deps: CliDeps): void {
  const config = program.command("config").description("configuration tools");
  addRunOptions(
    config.command("check").description("validate the effective configuration, print it with secrets masked"),
  )
    .addOption(
      new Option(
        "--no-key",
        "check without the signing key (CI): the key and the default account are not checked",
      ),
    )
    .action(async (opts: Record<string, unknown>) => {
      await configCheck(opts, deps);
    });
  config
    .command("schema")
    .description("print the JSON schema of the config file (config/schema.json); always JSON")
    .addOption(new Option("--json", "accepted for symmetry: the output is always one JSON document"))
    .action(() => {
      deps.stdout.write(`${JSON.stringify(configJsonSchema(), null, 2)}\n`);
    });
}

async function configCheck(opts: Record<string, unknown>, deps: CliDeps): Promise<void> {
  const loaded = loadConfig({ options: opts, env: deps.env, cwd: deps.cwd });
  // The keys, the account plan and the clients are loaded once the flags parse (src/cli/program.ts).
  const [
    { planAccounts, planSigners },
    { describeSignerAccount, resolveSignerAccount },
    { loadSignerKeys, loadSigningKey },
  ] = await Promise.all([
    import("../../app/daemon.js"),
    import("../../app/master.js"),
    import("../../config/keys.js"),
  ]);
  const { sources, warnings } = loaded;
  let { config } = loaded;
  const urls = effectiveUrls(config);
  // The key is loaded to prove it is usable; only where it came from and the address are shown. --no-key
  // (commander sets key=false) checks everything else, so CI needs no secret.
  const signers =
    opts.key === false || config.signers.length === 0
      ? []
      : loadSignerKeys(config.signers, { env: deps.env, cwd: deps.cwd });
  const key =
    opts.key === false
      ? undefined
      : (signers[0] ?? loadSigningKey({ keyFile: config.keyFile, env: deps.env, cwd: deps.cwd }));
  // What `run` will arm: an agent key without --account arms its master, found with userRole, exactly as `run`
  // asks it (docs/cli.md, "Agent keys"); an --account naming the agent itself is refused here as there.
  const found: SignerAccount | undefined =
    key && signers.length === 0
      ? await resolveSignerAccount({
          config,
          signer: key.address,
          apiUrl: urls.apiUrl,
          clock: deps.clock,
        })
      : undefined;
  if (found?.kind === "agent") config = { ...config, accounts: [found.master] };
  const said = key && found ? describeSignerAccount(key.address, found, "check") : undefined;
  const effective: Record<string, unknown> = {
    ...config,
    apiUrl: urls.apiUrl,
    rpcUrl: redactUrl(urls.rpcUrl),
    notifyUrls: config.notifyUrls.map(redactUrl),
    stateDir: stateDirOf(config, deps),
  };
  const accounts =
    config.signers.length > 0
      ? planSigners(
          config.signers.map((c, i) => ({ ...c, address: signers[i]?.address ?? `(signer ${c.name})` })),
        )
      : key
        ? planAccounts(config, key.address)
        : config.vault || config.accounts.length > 0
          ? planAccounts(config, "")
          : [];
  if (opts.json) {
    deps.stdout.write(
      `${JSON.stringify(
        {
          ok: true,
          config: effective,
          sources,
          key: key
            ? {
                source: key.where,
                signer: key.address,
                ...(found?.kind === "agent" ? { agentOf: found.master } : {}),
              }
            : null,
          accounts,
          actionsPerDay: loaded.actionsPerDay,
          weight: weightPlan(config),
          warnings,
          file: loaded.file ?? null,
        },
        null,
        2,
      )}\n`,
    );
    return;
  }
  const out = (s: string) => deps.stdout.write(`${s}\n`);
  out(`configuration OK${loaded.file ? ` (file ${loaded.file})` : ""}`);
  if (signers.length > 0)
    for (const k of signers)
      out(`key        ${k.where} -> signer ${k.address} (the key itself is never shown)`);
  else
    out(
      key
        ? `key        ${key.where} -> signer ${key.address} (the key itself is never shown)`
        : "key        not checked (--no-key); without --account the daemon acts for the signer's own account",
    );
  if (said) out(`${found?.kind === "agent" ? "signer" : "WARNING:"}   ${said}`);
  for (const a of accounts)
    out(
      `account    ${a.account}${a.vaultAddress ? " (sent as vaultAddress)" : ""}${config.signers.length > 0 ? ` signed by ${a.signer}` : ""}${key ? " (what run arms)" : ""}`,
    );
  out(
    `budget     ${loaded.actionsPerDay.toLocaleString("en-US")} scheduleCancel actions per day per account`,
  );
  const plan = weightPlan(config);
  out(
    `weight     the IP's weight a minute, steady (docs/operations.md, "The IP's weight"):\n${describeWeightPlan(plan)}`,
  );
  const room = deathRoom(config);
  if (room)
    out(`death      the room kept for every guarded engine's death at once:\n${describeDeathRoom(room)}`);
  for (const s of CONFIG_KEYS) {
    const value = s.key.split(".").reduce<unknown>((o, k) => (o as Record<string, unknown>)?.[k], effective);
    if (value === undefined) continue;
    const shown =
      DURATION_KEYS.has(s.key) && typeof value === "number" ? formatDuration(value) : JSON.stringify(value);
    out(`  ${s.key.padEnd(34)} ${shown.padEnd(30)} ${sources[s.key] ?? "default"}`);
  }
  for (const w of warnings) out(`WARNING: ${w}`);
}
