// Signing time of one `scheduleCancel` through hl-deadman's public signing API (signL1Action, dist/index.js), as the
// daemon signs a push, in a fresh process started with the node flags under test (bench/run.mjs runs it with the
// deployments' flags and without). Prints one JSON line: the first signature (what the first push pays: the
// library's tables, the first compilations) and the median of the next ones, each in ms.
// Usage: node [flags] bench/signing.mjs [count]
import { performance } from "node:perf_hooks";
import { id, Wallet } from "ethers";
import { signL1Action } from "../dist/index.js";

const COUNT = Number(process.argv[2] ?? 200);
// a throwaway key derived from a fixed label: it only ever signs here
const wallet = new Wallet(id("hl-deadman bench: signing key"));
const base = 1_763_800_000_000;
const signOnce = async (n) => {
  const started = performance.now();
  await signL1Action({
    wallet,
    action: { type: "scheduleCancel", time: base + 60_000 + n },
    nonce: base + n,
    isMainnet: true,
  });
  return performance.now() - started;
};
const firstMs = await signOnce(0);
const times = [];
for (let n = 1; n <= COUNT; n++) times.push(await signOnce(n));
times.sort((a, b) => a - b);
process.stdout.write(
  `${JSON.stringify({ firstMs, medianMs: times[Math.floor(times.length / 2)], count: COUNT })}\n`,
);
