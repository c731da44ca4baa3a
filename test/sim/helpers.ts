import { keccak256, toUtf8Bytes, Wallet } from "ethers";
import { afterEach } from "vitest";
import { signL1Action } from "../../src/protocol/hyperliquid/signing.js";
import { type SimulatorHandle, type SimulatorOptions, startSimulator } from "../../src/sim/server.js";

export type Signed = {
  action: Record<string, unknown>;
  nonce: number;
  signature: { r: string; s: string; v: number };
  vaultAddress?: string;
  expiresAfter?: number;
};

/** Builds and signs a scheduleCancel request body exactly as a client would. */
export async function signedScheduleCancel(args: {
  privateKey: string;
  nonce: number;
  time?: number | null;
  vaultAddress?: string;
  expiresAfter?: number;
  isMainnet?: boolean;
}): Promise<Signed> {
  const action: Record<string, unknown> = { type: "scheduleCancel" };
  if (args.time !== undefined) action.time = args.time;
  const signature = await signL1Action({
    privateKey: args.privateKey,
    action,
    nonce: args.nonce,
    vaultAddress: args.vaultAddress ?? null,
    expiresAfter: args.expiresAfter ?? null,
    isMainnet: args.isMainnet ?? true,
  });
  return {
    action,
    nonce: args.nonce,
    signature,
    ...(args.vaultAddress ? { vaultAddress: args.vaultAddress } : {}),
    ...(args.expiresAfter !== undefined ? { expiresAfter: args.expiresAfter } : {}),
  };
}

export async function post(
  url: string,
  body: unknown,
  init: { raw?: boolean; headers?: Record<string, string>; signal?: AbortSignal } = {},
): Promise<{ status: number; text: string; json: unknown; headers: Headers }> {
  const res = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", ...(init.headers ?? {}) },
    body: init.raw ? (body as string) : JSON.stringify(body),
    signal: init.signal ?? AbortSignal.timeout(5000),
  });
  const text = await res.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, text, json, headers: res.headers };
}

/** Deterministic throwaway test keys derived from a label. */
export function testWallet(label: string): Wallet {
  return new Wallet(keccak256(toUtf8Bytes(`hl-deadman sim test key: ${label}`)));
}

/**
 * One simulator per test, closed after it: `start` starts it, `onClose` registers what closes before it (the
 * clients and watchers the test made over it).
 */
export function simulatorPerTest(): {
  start(options?: SimulatorOptions): Promise<SimulatorHandle>;
  onClose(...closers: Array<() => void>): void;
} {
  let sim: SimulatorHandle | undefined;
  const closers: Array<() => void> = [];
  afterEach(async () => {
    for (const c of closers.splice(0)) c();
    await sim?.close();
    sim = undefined;
  });
  return {
    async start(options) {
      await sim?.close();
      sim = await startSimulator(options);
      return sim;
    },
    onClose: (...fns) => void closers.push(...fns),
  };
}
