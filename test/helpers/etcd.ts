/**
 * A real etcd for the coordination tests (Debian's etcd-server, /usr/bin/etcd): each call starts its own member on
 * two free loopback ports with a throw-away data directory, and `stop` kills it and removes the directory. A
 * missing binary FAILS with the install command (requireBinary); the tests never skip.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { requireBinary } from "./binaries.js";

export type EtcdHandle = {
  /** HOST:PORT of the client URL */
  endpoint: string;
  port: number;
  /** everything etcd wrote (its log), for a failing test's message */
  output(): string;
  stop(): Promise<void>;
};

/** A port free now on 127.0.0.1 (bound and released). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

export async function startEtcd({ timeoutMs = 15_000 }: { timeoutMs?: number } = {}): Promise<EtcdHandle> {
  const binary = requireBinary(process.env.HL_TEST_ETCD ?? "etcd");
  const [client, peer] = [await freePort(), await freePort()];
  const dir = mkdtempSync(path.join(tmpdir(), "hl-etcd-"));
  const clientUrl = `http://127.0.0.1:${client}`;
  const peerUrl = `http://127.0.0.1:${peer}`;
  const child: ChildProcess = spawn(
    binary,
    [
      "--name",
      "t",
      "--data-dir",
      path.join(dir, "data"),
      "--listen-client-urls",
      clientUrl,
      "--advertise-client-urls",
      clientUrl,
      "--listen-peer-urls",
      peerUrl,
      "--initial-advertise-peer-urls",
      peerUrl,
      "--initial-cluster",
      `t=${peerUrl}`,
      "--log-level",
      "warn",
    ],
    {
      stdio: ["ignore", "pipe", "pipe"],
      env: {
        PATH: process.env.PATH ?? "/usr/bin:/bin",
        ETCD_UNSUPPORTED_ARCH: process.env.ETCD_UNSUPPORTED_ARCH,
      },
    },
  );
  let out = "";
  child.stdout?.on("data", (c: Buffer) => (out += c.toString()));
  child.stderr?.on("data", (c: Buffer) => (out += c.toString()));
  let exited = false;
  const gone = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  void gone.then(() => (exited = true));
  const stop = async () => {
    if (!exited) child.kill("SIGKILL");
    await gone;
    rmSync(dir, { recursive: true, force: true });
  };
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (exited) {
      await stop();
      throw new Error(`etcd exited at start:\n${out.slice(-2000)}`);
    }
    const healthy = await fetch(`${clientUrl}/health`, { signal: AbortSignal.timeout(1_000) })
      .then(async (r) => r.ok && ((await r.json()) as { health?: string }).health === "true")
      .catch(() => false);
    if (healthy) break;
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`etcd did not become healthy within ${timeoutMs} ms:\n${out.slice(-2000)}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return { endpoint: `127.0.0.1:${client}`, port: client, output: () => out, stop };
}
