/**
 * Readable views of `ots_` results for people (the CLI): decimal numbers, ISO times, gas, base fee in gwei, values in
 * HYPE (18 decimals, ethers formatEther), receipt status ok/failed, created contracts. Scripts use `--json` instead.
 */
import { formatEther, formatUnits } from "ethers/utils";
import type { OtsFullblockHeader, OtsHeader, OtsReceipt, OtsTransaction } from "./schemas.js";

/** A 0x-hex quantity as a bigint (null and undefined stay null). */
export function quantity(hex: string | null | undefined): bigint | null {
  return hex === null || hex === undefined ? null : BigInt(hex);
}

const group = (n: bigint): string => n.toString().replace(/\B(?=(\d{3})+(?!\d))/g, ",");

/** Unix seconds (hex) → ISO-8601. */
export function isoTime(timestampHex: string): string {
  return new Date(Number(BigInt(timestampHex)) * 1000).toISOString();
}

/** Wei → gwei, trimmed (`0.1 gwei`). */
export function gwei(wei: bigint): string {
  return `${trimDecimals(formatUnits(wei, 9))} gwei`;
}

/** Wei → HYPE, trimmed (`1.25 HYPE`). */
export function hype(wei: bigint): string {
  return `${trimDecimals(formatEther(wei))} HYPE`;
}

function trimDecimals(s: string): string {
  return s.includes(".") ? s.replace(/\.?0+$/, "") : s;
}

function gasLine(used: string, limit: string): string {
  const u = BigInt(used);
  const l = BigInt(limit);
  const pct = l === 0n ? "" : ` (${(Number((u * 10_000n) / l) / 100).toFixed(2)} %)`;
  return `${group(u)} / ${group(l)}${pct}`;
}

/** The header as a block of `label value` lines. */
export function formatHeader(h: OtsHeader | OtsFullblockHeader): string {
  const n = BigInt(h.number);
  const rows: Array<[string, string | undefined]> = [
    ["block", `${n} (${h.number})`],
    ["hash", h.hash],
    ["parent", h.parentHash as string | undefined],
    ["time", `${isoTime(h.timestamp)} (${BigInt(h.timestamp)})`],
    ["gas used", gasLine(h.gasUsed, h.gasLimit)],
    ["base fee", h.baseFeePerGas ? gwei(BigInt(h.baseFeePerGas)) : "-"],
    ["miner", h.miner as string | undefined],
    ["size", typeof h.size === "string" ? `${group(BigInt(h.size))} bytes` : undefined],
    ["transactions", "transactionCount" in h ? String(h.transactionCount) : undefined],
  ];
  return rows
    .filter((r): r is [string, string] => r[1] !== undefined)
    .map(([k, v]) => `${k.padEnd(13)}${v}`)
    .join("\n");
}

/** One row per transaction: index, hash, from → to (or create → contract), value, gas used, status. */
export function formatTransactions(txs: OtsTransaction[], receipts: OtsReceipt[]): string {
  const rows: string[][] = [["#", "hash", "from → to", "value", "gas used", "status"]];
  txs.forEach((tx, i) => {
    const r = receipts[i];
    const to = tx.to ?? (r?.contractAddress ? `create ${r.contractAddress}` : "create");
    rows.push([
      String(BigInt(tx.transactionIndex)),
      tx.hash,
      `${tx.from} → ${to}`,
      hype(BigInt(tx.value)),
      r ? group(BigInt(r.gasUsed)) : "-",
      r ? (r.status === "0x1" ? "ok" : r.status === "0x0" ? "failed" : r.status) : "-",
    ]);
  });
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((row) => row[c]!.length)));
  return rows
    .map((row) =>
      row
        .map((cell, c) => cell.padEnd(widths[c]!))
        .join("  ")
        .trimEnd(),
    )
    .join("\n");
}
