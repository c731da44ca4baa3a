/**
 * The live status page in a real headless Chromium (Debian's `chromium`, driven by playwright-core): the
 * built CLI runs against the simulator, the page shows the account, its state in words and colour and a
 * countdown that moves, the open orders a fire would cancel (by kind) and rounded figures; a screenshot is taken (its path is printed); then the simulator refuses the account
 * (volume gate) and the page turns to NOT PROTECTED. Nothing secret is on the page. The test never writes
 * docs/status-page.png: copy the printed screenshot there by hand to refresh it.
 */
import { mkdtempSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Wallet } from "ethers";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { type SimulatorHandle, startSimulator } from "../../src/sim/server.js";
import { launchChromium } from "../helpers/chromium.js";
import { assertBuilt, type DaemonProcess, spawnCli } from "../reliability/harness.js";

/** The browser globals the page callbacks use (this project compiles without the DOM library). */
type BrowserWindow = {
  getComputedStyle(el: unknown): { backgroundColor: string };
  document: { querySelector(selector: string): { textContent: string | null } | null };
};

const wallet = Wallet.createRandom();
const account = wallet.address.toLowerCase();
let sim: SimulatorHandle;
let daemon: DaemonProcess;
let browser: Awaited<ReturnType<typeof launchChromium>>;
let healthUrl: string;

beforeAll(async () => {
  assertBuilt();
  sim = await startSimulator({
    ipWeightPerMinute: null,
    users: [
      {
        address: account,
        balanceUsd: 20_000,
        positions: [
          { coin: "BTC", szi: "0.5", entryPx: "95000", leverage: 10 },
          { coin: "ETH", szi: "-4", entryPx: "3300", leverage: 5, marginMode: "isolated" },
        ],
        orders: [
          { coin: "BTC", side: "B", limitPx: 90_000, sz: 0.1 },
          { coin: "ETH", side: "A", limitPx: 3_500, sz: 1 },
          // a reduce-only stop: the scheduled cancel removes it too, and the page counts it as such
          {
            coin: "BTC",
            side: "A",
            limitPx: 80_000,
            sz: 0.5,
            reduceOnly: true,
            orderType: "Stop Market",
            triggerPx: 80_000,
          },
        ],
      },
    ],
  });
  const stateDir = mkdtempSync(join(tmpdir(), "hl-status-state-"));
  daemon = spawnCli(
    [
      "run",
      "--api-url",
      sim.apiUrl,
      "--state-dir",
      stateDir,
      "--interval",
      "1s",
      // A 30 s deadline, not the 10 s minimum: once, in a full CI run, no push landed for 10 s while Chromium
      // started beside the other suites, the switch fired and the page rightly said "1 used". The log was not
      // kept (it is now, in the assertion's message); the two causes that fit are this test process (which
      // hosts the simulator) starved of CPU, and fsyncs slower than the write-ahead budget (the request
      // timeout), which skips a push by design.
      "--deadline",
      "30s",
      "--request-timeout",
      "3s",
      "--exposure-interval",
      "1s",
      "--permanent-recheck-interval",
      "1s",
      "--health",
      "127.0.0.1:0",
    ],
    { HL_PRIVATE_KEY: wallet.privateKey },
  );
  const [listening] = await Promise.all([
    daemon.waitForEvent("health.listening", 10_000),
    daemon.waitForEvent("exposure", 10_000),
  ]);
  healthUrl = String(listening.url);
  browser = await launchChromium();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  daemon?.kill("SIGKILL");
  await daemon?.exited;
  await sim?.close();
});

describe("status page (headless Chromium)", () => {
  test("behavior: shows the account armed with a moving countdown, the exposure, then NOT PROTECTED on a fault", async () => {
    const page = await browser.context.newPage();
    const external: string[] = [];
    page.on("request", (r) => {
      if (!r.url().startsWith(healthUrl)) external.push(r.url());
    });
    await page.goto(`${healthUrl}/`);
    const card = page.locator(`[data-account="${account}"]`);
    await card.waitFor({ timeout: 10_000 });
    expect(await card.getAttribute("data-state")).toBe("armed");
    const state = card.locator('[data-field="state"]');
    expect(await state.textContent()).toBe("PROTECTED");
    // The page redraws every 200 ms: an element read between a redraw's removal and insertion is detached and has
    // no computed style, so the colour is read until one redraw is seen whole.
    await expect
      .poll(() =>
        state.evaluate((el) => (globalThis as unknown as BrowserWindow).getComputedStyle(el).backgroundColor),
      )
      .toBe("rgb(26, 127, 55)");

    // the countdown is a number of seconds below the 30 s deadline, and it moves
    const countdown = card.locator('[data-field="countdown"]');
    const read = async () => Number((await countdown.textContent())!.replace(" s", ""));
    const first = await read();
    expect(first).toBeGreaterThan(0);
    expect(first).toBeLessThanOrEqual(30);
    await page.waitForFunction(
      (before) =>
        (globalThis as unknown as BrowserWindow).document.querySelector('[data-field="countdown"]')
          ?.textContent !== before,
      await countdown.textContent(),
      // It redraws every 200 ms; the bound is for a CI machine whose Chromium is starved of CPU.
      { timeout: 10_000 },
    );

    expect(
      await card.locator('[data-field="triggers"]').textContent(),
      `the daemon's log:\n${daemon.lines.map((l) => JSON.stringify(l)).join("\n")}`,
    ).toBe("0 used / 10 left (limit 10)");
    await card.locator('[data-coin="BTC"]').waitFor({ timeout: 10_000 });
    const btc = await card.locator('[data-coin="BTC"] td').allTextContents();
    expect(btc[0]).toBe("BTC");
    expect(btc[5]).toMatch(/^\d+\.\d\d %$/);
    expect(await card.locator('[data-coin="ETH"] td').first().textContent()).toBe("ETH");
    // figures rounded for people: no price or size with more digits than it needs (issue 43: "4759.49367089")
    for (const cell of [...btc.slice(1, 5)]) expect(cell).not.toMatch(/\.\d{5,}/);
    // what a fire would cancel: every open order, the reduce-only stop named as such
    await expect
      .poll(() => card.locator('[data-field="open-orders"]').textContent(), { timeout: 10_000 })
      .toBe("3 orders (1 trigger (stop / take-profit), 1 reduce-only): a fire cancels all");
    expect(await page.locator("#ready").textContent()).toBe("READY");
    // the audit trail's newest records, newest first: the daemon's start and the account armed
    const audit = page.locator('[data-audit="1"] td:nth-child(3)');
    await expect.poll(() => audit.allTextContents()).toEqual(["switch.armed", "daemon.started"]);
    const status = (await (await fetch(`${healthUrl}/status.json`)).json()) as { audit: { last: unknown[] } };
    expect(status.audit).toMatchObject({ sequence: 2, hash: expect.stringMatching(/^[0-9a-f]{64}$/) });
    expect(status.audit.last[0]).toMatchObject({ sequence: 2, type: "xyz.hl-deadman.switch.armed", account });

    const shot = join(tmpdir(), `hl-deadman-status-page-${process.pid}.png`);
    await page.screenshot({ path: shot, fullPage: true });
    expect(statSync(shot).size).toBeGreaterThan(10_000);
    console.log(`status page screenshot: ${shot}`);

    // nothing secret on the page, no request leaves the health listener
    const html = `${await page.content()}${await (await fetch(`${healthUrl}/status.json`)).text()}`;
    expect(html.toLowerCase()).not.toContain(wallet.privateKey.slice(2).toLowerCase());
    expect(html).not.toContain(sim.apiUrl);
    expect(external).toEqual([]);

    // the exchange now refuses the account (under the $1M volume gate): the page says so, in red
    const admin = await fetch(`${sim.adminUrl}/users`, {
      method: "POST",
      body: JSON.stringify({ address: account, volumeUsd: 500, balanceUsd: 20_000 }),
    });
    expect(admin.status).toBe(200);
    await page.waitForSelector(`[data-account="${account}"][data-state="not_protected"]`, {
      timeout: 10_000,
    });
    const refused = page.locator(`[data-account="${account}"] [data-field="state"]`);
    expect(await refused.textContent()).toBe("NOT PROTECTED (volume_gate)");
    await expect
      .poll(() =>
        refused.evaluate(
          (el) => (globalThis as unknown as BrowserWindow).getComputedStyle(el).backgroundColor,
        ),
      )
      .toBe("rgb(207, 34, 46)");
    expect(await page.locator("#ready").textContent()).toBe("NOT READY");
    expect(await page.locator("#reasons li").first().textContent()).toContain("volume_gate");
    const faultShot = join(tmpdir(), `hl-deadman-status-page-fault-${process.pid}.png`);
    await page.screenshot({ path: faultShot, fullPage: true });
    console.log(`status page screenshot (not protected): ${faultShot}`);
    await page.close();
  }, 40_000);
});
