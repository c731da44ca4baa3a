/** The library surface of hl-deadman (package.json "exports" ".") — snapshotted by test/index.test.ts. */
export { BaseError, ValidationError } from "./errors/base.js";
export { NonceSource } from "./hyperliquid/nonce.js";
export {
  AGENT_TYPES,
  EXCHANGE_DOMAIN,
  type L1Signature,
  type L1Signer,
  l1ActionDigest,
  l1ActionHash,
  recoverL1ActionSigner,
  signL1Action,
} from "./hyperliquid/signing.js";
export { type Clock, ManualClock, systemClock } from "./utils/clock.js";
export { parseDuration } from "./utils/duration.js";
export { VERSION } from "./version.js";
