/**
 * `doctor` and the simulator's public demo key (issue 43): the demo key against the simulator is a rehearsal; against
 * anything that is not the simulator it fails 78, since anyone can sign with it. The simulator is told apart by the
 * one answer only it gives (`{"type":"hlDeadmanSimulator"}`); "not the simulator" here is a real HTTP front that
 * forwards everything to a simulator but refuses that type with 422, as the exchange does an unknown type.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { simulatorDemoKey } from "../../src/protocol/hyperliquid/simulator-id.js";
import { type SimulatorHandle, startSimulator } from "../../src/sim/server.js";
import { assertBuilt, runCliProcess } from "../helpers/process.js";
import { freePort, tempDir } from "../reliability/harness.js";

let sim: SimulatorHandle;
let front: Server;
let frontUrl: string;
const tmp = tempDir("hl-doctor-demo-");

beforeAll(async () => {
  assertBuilt();
  sim = await startSimulator({ demo: true, ipWeightPerMinute: null });
  front = createServer((req, res) => {
    let body = "";
    req.setEncoding("utf8");
    req.on("data", (c: string) => {
      body += c;
    });
    req.on("end", async () => {
      if (body.includes('"hlDeadmanSimulator"')) {
        res.writeHead(422, { "content-type": "text/plain" });
        res.end("Failed to deserialize the JSON body into the target type");
        return;
      }
      const r = await fetch(`${sim.apiUrl}${req.url}`, {
        method: req.method ?? "POST",
        headers: { "content-type": "application/json" },
        ...(req.method === "GET" ? {} : { body }),
      });
      const headers: Record<string, string> = { "content-type": r.headers.get("content-type") ?? "" };
      const date = r.headers.get("date");
      if (date) headers.date = date;
      res.writeHead(r.status, headers);
      res.end(await r.text());
    });
  });
  await new Promise<void>((r) => front.listen(0, "127.0.0.1", () => r()));
  frontUrl = `http://127.0.0.1:${(front.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise<void>((r) => front.close(() => r()));
  await sim.close();
  tmp.cleanup();
});

async function doctor(apiUrl: string) {
  const r = await runCliProcess(
    [
      "doctor",
      "--api-url",
      apiUrl,
      "--explorer-url",
      sim.explorerUrl,
      "--state-dir",
      path.join(tmp.dir, `state-${Math.random().toString(36).slice(2)}`),
      "--health",
      `127.0.0.1:${await freePort()}`,
      "--json",
    ],
    { HL_PRIVATE_KEY: simulatorDemoKey(1).privateKey },
    { timeoutMs: 20_000 },
  );
  const report = JSON.parse(r.stdout) as {
    exitCode: number;
    checks: Array<{ check: string; status: string; finding: string; exitCode: number }>;
  };
  return { code: r.code, report, stderr: r.stderr };
}

describe("doctor and the simulator's demo key", () => {
  test("behavior: against the simulator, the demo key is a rehearsal (no failure for it)", async () => {
    const r = await doctor(sim.apiUrl);
    const key = r.report.checks.filter((c) => c.check === "key");
    expect(key.map((c) => c.status)).not.toContain("fail");
    expect(key.some((c) => c.finding.includes("demo key (seed 1) against the simulator"))).toBe(true);
  });

  test("error: against anything that is not the simulator, the demo key fails key, exit 78", async () => {
    const r = await doctor(frontUrl);
    expect(r.code, r.stderr).toBe(78);
    const failed = r.report.checks.find((c) => c.check === "key" && c.status === "fail");
    expect(failed?.finding).toContain("is the simulator's public demo key (seed 1)");
    expect(failed?.finding).toContain(`${frontUrl} is not the simulator`);
    expect(failed?.exitCode).toBe(78);
  });
});
