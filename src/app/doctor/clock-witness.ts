/**
 * `doctor`'s `clock-witness` check (issue 40): the exchange's time as the daemon verifies it, from two outside
 * witnesses — an answer's `Date` (the `clock` check reads it) and the HyperEVM's latest block timestamp, read here
 * from the network's default RPC or `--rpc-url` (none with a custom `--api-url` and no `--rpc-url`, as the daemon:
 * src/config/networks.ts `effectiveBlockTimeUrl`). Judged by the switch's own time model (src/switch/exchange-time.ts,
 * `takeBlock` and `takeSample`): whether the two agree (then the exchange's time is verified), and, verified, how far
 * the local clock is from it. Beyond the `clock.suspect` limit (5 s, docs/daemon.md "Time") it fails: `/readyz` would
 * answer 503 for as long as the daemon ran on this host. Witnesses that disagree, or a block that cannot be read,
 * warn: the daemon still verifies the time on a `Date` and the exchange's acceptance of a push (`date+verdict`).
 */

import { effectiveBlockTimeUrl } from "../../config/networks.js";
import type { Config } from "../../config/schema.js";
import type { Clock } from "../../core/clock.js";
import { formatDuration } from "../../core/duration.js";
import { ExitCode } from "../../core/exit-codes.js";
import { EvmClient } from "../../protocol/evm/client.js";
import {
  initialTime,
  readingsAgree,
  SUSPECT_MS,
  takeBlock,
  takeSample,
  timesAt,
} from "../../switch/exchange-time.js";
import { type CheckResult, fail, ok, warn } from "./report.js";

const CHECK = "clock-witness";

/** One answer's `Date`, read over `sentAt..receivedAt` on the local clock (the `clock` check's sample). */
export type DateSample = { date: number | undefined; sentAt: number; receivedAt: number };
/** The latest block's timestamp (whole seconds), read over `sentAt..receivedAt` on the local clock. */
export type BlockSample = { timestampSec: number; sentAt: number; receivedAt: number };

/**
 * The two witnesses judged (pure). Both samples are on the local clock's scale: the model's monotonic axis is the
 * wall clock here (a one-shot), so the verified estimate's distance from that axis is the local clock's offset.
 */
export function judgeClockWitnesses(
  date: DateSample | null,
  block: { url: string; sample: BlockSample | null; error?: string } | null,
): CheckResult {
  if (block === null)
    return ok(
      CHECK,
      null,
      "no block witness: a custom --api-url and no --rpc-url (as for the explorer); the daemon verifies the exchange's time on an answer's Date and the exchange's acceptance of a push planned on it (date+verdict)",
      "--rpc-url to read the HyperEVM block time as a second witness",
    );
  if (block.sample === null)
    return warn(
      CHECK,
      null,
      `the HyperEVM block time cannot be read from ${block.url} (${block.error ?? "no answer"}): one witness less; the daemon verifies the exchange's time on its Date and verdicts (date+verdict)`,
      "check --rpc-url",
    );
  if (date === null || date.date === undefined)
    return warn(
      CHECK,
      null,
      "no answer's Date to compare the HyperEVM block time with (see the clock check)",
      "",
    );
  const b = block.sample;
  let t = initialTime(date.sentAt, date.sentAt, null);
  const byBlock = takeBlock(
    t,
    { timestampSec: b.timestampSec, sentMono: b.sentAt, receivedMono: b.receivedAt },
    b.receivedAt,
  );
  if (byBlock.verdict.kind === "refused")
    return warn(
      CHECK,
      null,
      `the HyperEVM block timestamp was refused: ${byBlock.verdict.detail}`,
      "check --rpc-url",
    );
  t = byBlock.time;
  const byDate = takeSample(
    t,
    { date: date.date, sentMono: date.sentAt, receivedMono: date.receivedAt },
    date.receivedAt,
  );
  t = byDate.time;
  const blockReading = t.block!;
  const dateReading = t.date;
  const gap = dateReading == null ? Number.NaN : Math.round(dateReading.offset - blockReading.offset);
  const window =
    dateReading == null ? 0 : Math.round(dateReading.uncertainty + blockReading.uncertainty + 2_000);
  const now = Math.max(date.receivedAt, b.receivedAt);
  const times = timesAt(t, now, now);
  if (dateReading == null || !readingsAgree(dateReading, blockReading) || !times.witnessed)
    return warn(
      CHECK,
      null,
      `the exchange's Date and the HyperEVM block disagree${Number.isFinite(gap) ? ` by ${formatDuration(Math.abs(gap))} (the Date ${gap >= 0 ? "ahead" : "behind"}; they agree within ± ${formatDuration(window)})` : ""}: one of them is wrong (a proxy in front of the exchange, or the RPC); the daemon verifies the time only once the exchange's verdicts agree with one, /readyz 503 until then`,
      "check the proxy in front of the exchange, or --rpc-url",
    );
  // verified: the local clock's distance from the exchange's time two witnesses agree on
  const skew = times.local - times.exchange;
  const said = `the exchange's Date and the HyperEVM block agree (${formatDuration(Math.abs(gap))} apart, within ± ${formatDuration(window)}): the exchange's time is verified; the local clock is ${formatDuration(Math.abs(skew))} ${skew >= 0 ? "ahead of" : "behind"} it`;
  if (Math.abs(skew) > SUSPECT_MS)
    return fail(
      CHECK,
      null,
      `${said}: beyond the clock.suspect limit (5 s): readiness would fail (/readyz 503) while the daemon runs on this host`,
      "fix the host's time sync (chrony/NTP)",
      ExitCode.runtime,
    );
  return ok(CHECK, null, said);
}

/** Reads the latest block's timestamp from the RPC `run` would read it from (none: null), then judges. */
export async function checkClockWitness(p: {
  config: Config;
  clock: Clock;
  date: DateSample | null;
}): Promise<CheckResult> {
  const url = effectiveBlockTimeUrl(p.config);
  if (url === null) return judgeClockWitnesses(p.date, null);
  const client = new EvmClient({ rpcUrl: url, timeoutMs: p.config.requestTimeout });
  try {
    const sentAt = p.clock.now();
    const timestampSec = await client.latestBlockTime();
    const receivedAt = p.clock.now();
    return judgeClockWitnesses(p.date, { url, sample: { timestampSec, sentAt, receivedAt } });
  } catch (error) {
    return judgeClockWitnesses(p.date, {
      url,
      sample: null,
      error: error instanceof Error ? error.message : String(error),
    });
  } finally {
    client.close();
  }
}
