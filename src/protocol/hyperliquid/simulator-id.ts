/**
 * How a client tells the simulator (src/sim) from the exchange, and the simulator's demo keys. The simulator answers
 * the info request `{"type":"hlDeadmanSimulator"}` with `{"simulator":"hl-deadman","seed":N}`; the exchange has no
 * such type and refuses it (422), so only the simulator gives that answer. The demo key of each seed is public (the
 * simulator prints it, the docs show it): whatever it signs for anywhere else, anyone can sign too.
 */
import { keccak256 } from "ethers/crypto";
import { computeAddress } from "ethers/transaction";
import { toUtf8Bytes } from "ethers/utils";

export const SIMULATOR_INFO_TYPE = "hlDeadmanSimulator";
export const SIMULATOR_NAME = "hl-deadman";

/** The simulator's demo key for a seed: keccak256 of a fixed label and the seed. */
export function simulatorDemoKey(seed: number): { privateKey: string; address: string } {
  const privateKey = keccak256(toUtf8Bytes(`hl-deadman simulator demo account; seed=${seed}`));
  return { privateKey, address: computeAddress(privateKey).toLowerCase() };
}

/** The seeds whose demo address `address` is checked against: the default (1) and the first few others. */
export const DEMO_SEEDS_CHECKED = 16;

/** The seed whose demo key signs as `address` (seeds 0..DEMO_SEEDS_CHECKED), or null. */
export function demoSeedOf(address: string): number | null {
  const a = address.toLowerCase();
  for (let seed = 0; seed <= DEMO_SEEDS_CHECKED; seed++)
    if (simulatorDemoKey(seed).address === a) return seed;
  return null;
}

/** The simulator's answer to SIMULATOR_INFO_TYPE, or null for anything else (the exchange's refusal included). */
export function parseSimulatorId(body: unknown): { seed: number } | null {
  if (typeof body !== "object" || body === null) return null;
  const b = body as Record<string, unknown>;
  return b.simulator === SIMULATOR_NAME && typeof b.seed === "number" ? { seed: b.seed } : null;
}
