/**
 * The status page, `/status.json` and `/metrics` of a daemon whose connection guard waits for its first engine
 * (issue 38, "Words"): the built CLI against the simulator with `--guard-socket` and no engine connected. Nothing
 * says "engine up" while the account waits: not the page (headless Chromium), not `guard.up`; the account's engine
 * is `waiting` beside its other status, and `hl_deadman_engine_state` says so. Then an engine names the account
 * and all three say up.
 */
import { mkdtempSync } from "node:fs";
import { connect, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Wallet } from "ethers";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { type SimulatorHandle, startSimulator } from "../../src/sim/server.js";
import { launchChromium } from "../helpers/chromium.js";
import { eventually } from "../helpers/eventually.js";
import { assertBuilt, type DaemonProcess, spawnCli } from "../reliability/harness.js";

const wallet = Wallet.createRandom();
const account = wallet.address.toLowerCase();
const guardSocket = join(mkdtempSync(join(tmpdir(), "hl-status-guard-")), "guard.sock");
let sim: SimulatorHandle;
let daemon: DaemonProcess;
let browser: Awaited<ReturnType<typeof launchChromium>> | undefined;
let engine: Socket | undefined;
let healthUrl: string;

type StatusJson = {
  ready: boolean;
  reasons: string[];
  guard: { up: boolean; kind: string; accounts: Record<string, string> };
  guardView: { text: string; level: string };
  accounts: { account: string; state: string; engine: string | null }[];
};
const statusJson = async () => (await (await fetch(`${healthUrl}/status.json`)).json()) as StatusJson;
const metric = async (state: string) => {
  const text = await (await fetch(`${healthUrl}/metrics`)).text();
  const m = text.match(
    new RegExp(`^hl_deadman_engine_state\\{account="${account}",state="${state}"\\} (\\d+)$`, "m"),
  );
  return m ? Number(m[1]) : null;
};

beforeAll(async () => {
  assertBuilt();
  sim = await startSimulator({ ipWeightPerMinute: null, users: [{ address: account, balanceUsd: 20_000 }] });
  daemon = spawnCli(
    [
      "run",
      "--api-url",
      sim.apiUrl,
      "--state-dir",
      mkdtempSync(join(tmpdir(), "hl-status-guard-state-")),
      "--interval",
      "1s",
      "--deadline",
      "30s",
      "--guard-socket",
      guardSocket,
      "--health",
      "127.0.0.1:0",
    ],
    { HL_PRIVATE_KEY: wallet.privateKey },
  );
  const [listening] = await Promise.all([
    daemon.waitForEvent("health.listening", 10_000),
    daemon.waitForEvent("guard.listening", 10_000),
    daemon.waitForEvent("heartbeat.ok", 10_000),
    daemon.waitForEvent("exposure", 10_000),
  ]);
  healthUrl = String(listening.url);
}, 60_000);

afterAll(async () => {
  engine?.destroy();
  await browser?.close();
  daemon?.kill("SIGKILL");
  await daemon?.exited;
  await sim?.close();
});

describe("status page: a socket guard waiting for its engine", () => {
  test("behavior: waiting is said as waiting (page, status.json, metrics), never engine up; then the engine connects", async () => {
    // /status.json: the account armed (pushes go on) and its engine waiting; the aggregate is not "up"
    const waiting = await statusJson();
    expect(waiting.accounts).toEqual([
      expect.objectContaining({ account, state: "armed", engine: "waiting" }),
    ]);
    expect(waiting.guard).toMatchObject({ kind: "socket", up: false, accounts: { [account]: "waiting" } });
    expect(waiting.ready).toBe(false);
    expect(waiting.reasons).toContain(
      `engine guard (socket): waiting for the engine to connect for ${account}`,
    );
    expect(waiting.reasons.join("\n")).not.toMatch(/down/i);
    expect(waiting.guardView.text).toMatch(/^WAITING for the engine to connect for 1 account \(socket: /);
    expect(JSON.stringify(waiting)).not.toMatch(/engine up/i);
    expect(await metric("waiting")).toBe(1);
    expect(await metric("up")).toBe(0);

    // the page, as a browser draws it
    browser = await launchChromium();
    const page = await browser.context.newPage();
    await page.goto(`${healthUrl}/`);
    const card = page.locator(`[data-account="${account}"]`);
    await card.waitFor({ timeout: 10_000 });
    const guardLine = page.locator("#guard");
    await expect.poll(() => guardLine.textContent(), { timeout: 10_000 }).toMatch(/^WAITING for the engine/);
    expect(await card.locator('[data-field="engine"]').textContent()).toMatch(
      /^WAITING: no engine has connected/,
    );
    expect(await page.locator("body").innerText()).not.toMatch(/engine up/i);

    // an engine names the account: up everywhere
    engine = connect({ path: guardSocket });
    engine.setEncoding("utf8");
    let answer = "";
    engine.on("data", (c: string) => {
      answer += c;
    });
    await new Promise<void>((r) => engine!.once("connect", () => r()));
    engine.write(`hl-deadman-guard/1 ${account}\n`);
    await eventually(() => answer === "ok\n", { what: "the daemon's ok" });
    await eventually(async () => (await statusJson()).accounts[0]?.engine === "up", { what: "engine up" });
    const up = await statusJson();
    expect(up.guard).toMatchObject({ up: true, accounts: { [account]: "up" } });
    expect(up.guardView.text).toMatch(/^engine up for 1 account \(socket: /);
    expect(await metric("waiting")).toBe(0);
    expect(await metric("up")).toBe(1);
    await expect.poll(() => guardLine.textContent(), { timeout: 10_000 }).toMatch(/^engine up for 1 account/);
    expect(await card.locator('[data-field="engine"]').textContent()).toBe("up (connected)");
    await page.close();
  }, 60_000);
});
