/**
 * The clients' own defaults. The configuration's option table takes them as its defaults (src/config/options.ts),
 * so a library user gets the daemon's figures while the protocol never reads the configuration. A module of its
 * own: the option table, which every command loads to parse its flags, does not load the HTTP client with them.
 */
export const CLIENT_DEFAULTS = Object.freeze({
  /** one request's time-out, and the `expiresAfter` window of a signed action (ms) */
  requestTimeoutMs: 5_000,
  /** users per `batchClearinghouseStates` request */
  chunkSize: 50,
  /** chunks in flight at once */
  concurrency: 2,
});
