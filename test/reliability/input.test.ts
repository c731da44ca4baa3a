/**
 * Fault matrix, bad input everywhere it enters `hl-deadman run`: flags, environment, config file, addresses,
 * keys, key-file permissions, durations. Each gets a message naming the bad value and the rule, and the
 * contract's exit code (2 usage, 78 configuration). The simulator counts requests: a refused start sends
 * nothing. No output ever contains key text.
 */
import { chmodSync, writeFileSync } from "node:fs";
import path from "node:path";
import { id, Wallet } from "ethers";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { type SimulatorHandle, startSimulator } from "../../src/sim/server.js";
import { cli } from "../helpers/cli.js";
import { baseEnv } from "../helpers/process.js";
import { tempDir } from "./harness.js";
import { reliabilityFile } from "./report.js";

const { proven } = reliabilityFile("input.test.ts");

const wallet = new Wallet(id("hl-deadman reliability: input"));
const KEY = wallet.privateKey;
const dir = tempDir();
let sim: SimulatorHandle;
const outputs: string[] = [];

beforeAll(async () => {
  sim = await startSimulator({ users: [{ address: wallet.address.toLowerCase() }] });
});
afterAll(async () => {
  // A refused start never reaches the exchange, and no output anywhere held the key.
  expect(sim.state.requestCount()).toBe(0);
  for (const out of outputs) {
    expect(out).not.toContain(KEY.slice(2));
  }
  await sim.close();
  dir.cleanup();
});

type Case = {
  args?: string[];
  env?: Record<string, string>;
  code: number | number[];
  /** every one of these must appear in stderr */
  says: Array<string | RegExp>;
  /** must not appear in any output */
  secret?: string;
};

let cases = 0;

/**
 * Runs `hl-deadman run` in-process with a safe base (loopback API, no health port, temp state dir) plus the case:
 * what is checked is its exit code and what it writes, and every case is refused before the daemon starts, so a
 * process would add only its start-up (a third of a second of CPU each). Each case has its own state directory:
 * `run` takes the directory's lock before it reads the key, so cases running at once on one directory could meet
 * "held by another daemon" (exit 75) instead of their own error.
 */
async function check(c: Case) {
  const args = [
    "run",
    "--api-url",
    sim.apiUrl,
    "--health",
    "off",
    "--state-dir",
    path.join(dir.dir, `state-${++cases}`),
    ...(c.args ?? []),
  ];
  const r = await cli(args, { env: { ...baseEnv(), HL_PRIVATE_KEY: KEY, ...c.env } });
  const all = `${r.stdout}\n${r.stderr}`;
  outputs.push(all);
  const codes = Array.isArray(c.code) ? c.code : [c.code];
  expect(
    codes,
    `exit code of run ${c.args?.join(" ") ?? ""} ${JSON.stringify(c.env ?? {})}\n${all}`,
  ).toContain(r.code);
  for (const s of c.says) {
    if (typeof s === "string") expect(r.stderr).toContain(s);
    else expect(r.stderr).toMatch(s);
  }
  if (c.secret) expect(all).not.toContain(c.secret);
  return r;
}

const all = (cases: Case[]) => Promise.all(cases.map(check));

describe.concurrent("reliability: bad input", () => {
  test("error: bad flags", async () => {
    await all([
      { args: ["--bogus"], code: 2, says: ["--bogus"] },
      // There is no key flag: the value must not be echoed either.
      { args: ["--private-key", KEY], code: 2, says: ["--private-key"], secret: KEY.slice(2) },
      { args: ["--on-shutdown", "maybe"], code: 2, says: ["--on-shutdown", "maybe", "remove, keep"] },
      { args: ["--network", "moon"], code: 2, says: ["--network", "moon", "mainnet, testnet"] },
      { args: ["--health", "everywhere"], code: 78, says: ["health", "everywhere", "HOST:PORT"] },
      { args: ["--api-url", "ftp://example.com"], code: 78, says: ["apiUrl", "ftp://example.com"] },
    ]);
    proven("bad-flags");
  });

  test("error: bad environment values", async () => {
    await all([
      { env: { HL_INTERVAL: "fast" }, code: 78, says: ["HL_INTERVAL", "fast", "duration"] },
      { env: { HL_ON_SHUTDOWN: "later" }, code: 78, says: ["HL_ON_SHUTDOWN", "later"] },
      {
        env: { HL_EXPOSURE_CHUNK_SIZE: "many" },
        code: 78,
        says: ["HL_EXPOSURE_CHUNK_SIZE", "many", "number"],
      },
      { env: { HL_LOG_LEVEL: "loud" }, code: 78, says: ["HL_LOG_LEVEL", "loud", "fatal"] },
    ]);
    proven("bad-env");
  });

  test("error: bad config file", async () => {
    const notJson = path.join(dir.dir, "not-json.json");
    writeFileSync(notJson, "{ interval: 15s ");
    const unknownKey = path.join(dir.dir, "unknown-key.json");
    writeFileSync(unknownKey, JSON.stringify({ intervall: "15s" }));
    const wrongType = path.join(dir.dir, "wrong-type.json");
    writeFileSync(wrongType, JSON.stringify({ onShutdown: true, triggerLimit: "ten" }));
    const array = path.join(dir.dir, "array.json");
    writeFileSync(array, "[1, 2]");
    const missing = path.join(dir.dir, "missing.json");
    await all([
      { args: ["--config", missing], code: 78, says: [missing, "ENOENT"] },
      { args: ["--config", notJson], code: 78, says: [notJson, "not valid JSON"] },
      { args: ["--config", unknownKey], code: 78, says: ["intervall", "unknown key", unknownKey] },
      // Every problem is listed at once.
      { args: ["--config", wrongType], code: 78, says: ["onShutdown", "triggerLimit", wrongType] },
      { args: ["--config", array], code: 78, says: ["one JSON object"] },
      { env: { HL_CONFIG: missing }, code: 78, says: [missing] },
    ]);
    proven("bad-config-file");
  });

  test("error: bad addresses", async () => {
    await all([
      { args: ["--account", "0x123"], code: 78, says: ["0x123", "40 hexadecimal"] },
      { args: ["--vault", "vault-one"], code: 78, says: ["vault-one", "40 hexadecimal"] },
      {
        env: { HL_ACCOUNTS: `${wallet.address},0xZZ` },
        code: 78,
        says: ["HL_ACCOUNTS", "0xZZ", "40 hexadecimal"],
      },
      { args: ["--exposure-user", "bob"], code: 78, says: ["bob", "40 hexadecimal"] },
    ]);
    proven("bad-address");
  });

  test("error: bad keys", async () => {
    const almost = `0x${"ab".repeat(31)}c`; // 63 hex digits
    const garbageFile = path.join(dir.dir, "garbage.key");
    writeFileSync(garbageFile, "correct horse battery staple\n", { mode: 0o600 });
    await all([
      { env: { HL_PRIVATE_KEY: "" }, code: 78, says: ["No signing key found", "HL_PRIVATE_KEY"] },
      {
        env: { HL_PRIVATE_KEY: almost },
        code: 78,
        says: ["HL_PRIVATE_KEY", "64 hexadecimal"],
        secret: almost,
      },
      {
        env: { HL_PRIVATE_KEY: `0x${"0".repeat(64)}` },
        code: 78,
        says: ["HL_PRIVATE_KEY", "not a valid secp256k1 private key"],
        secret: "0".repeat(64),
      },
      {
        args: ["--key-file", garbageFile],
        code: 78,
        says: [garbageFile, "not a private key"],
        secret: "horse battery",
      },
      { args: ["--key-file", path.join(dir.dir, "absent.key")], code: 78, says: ["does not exist"] },
    ]);
    proven("bad-key");
  });

  test("error: key file permissions", async () => {
    const cases: Case[] = [];
    for (const mode of [0o644, 0o640, 0o604, 0o660]) {
      const file = path.join(dir.dir, `key-${mode.toString(8)}.key`);
      writeFileSync(file, `${KEY}\n`);
      chmodSync(file, mode);
      cases.push({
        args: ["--key-file", file],
        code: 78,
        says: [file, `mode ${mode.toString(8)}`, `chmod 600 ${file}`],
        secret: KEY.slice(2),
      });
    }
    await all(cases);
    proven("key-permissions");
  });

  test("error: bad durations", async () => {
    await all([
      { args: ["--interval", "15x"], code: 78, says: ["interval", "15x", "duration"] },
      { args: ["--deadline", "5s"], code: 78, says: ["deadline", /10 ?s/] },
      { args: ["--interval", "40s", "--deadline", "60s"], code: 78, says: ["interval", "deadline"] },
      { args: ["--request-timeout", "-2s"], code: 78, says: ["requestTimeout", "-2s"] },
      { env: { HL_DEADLINE: "1 minute" }, code: 78, says: ["HL_DEADLINE", "1 minute"] },
    ]);
    proven("bad-durations");
  });
});
