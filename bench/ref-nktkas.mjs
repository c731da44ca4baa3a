// The reference for "cold start to the first confirmed heartbeat": the smallest script that sends one
// scheduleCancel with @nktkas/hyperliquid (dev dependency, benchmark only) and the same ethers Wallet type.
// Usage: HL_PRIVATE_KEY=0x… node bench/ref-nktkas.mjs <apiUrl>. Prints "ok" and exits 0 once confirmed.
import { ExchangeClient, HttpTransport } from "@nktkas/hyperliquid";
import { Wallet } from "ethers";

const apiUrl = process.argv[2];
const wallet = new Wallet(process.env.HL_PRIVATE_KEY ?? "");
const transport = new HttpTransport({ apiUrl, timeout: 5000 });
const client = new ExchangeClient({ transport, wallet });
await client.scheduleCancel({ time: Date.now() + 60_000 });
process.stdout.write("ok\n");
