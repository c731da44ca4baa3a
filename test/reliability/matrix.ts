/**
 * The fault matrix of issue 8: one row per case, what it proves, and the test that proves it. The reliability
 * suite (test/reliability/*.test.ts) names its tests exactly `row.test`, records each proven row, and prints the
 * counts at the end; README.md ("Reliability") carries the same table (test/reliability/matrix.test.ts checks both).
 */

export type ReliabilityCase = {
  /** stable id, used by the tests to report the row proven */
  id: string;
  /** which issue-8 bullet the row belongs to */
  group:
    | "outage"
    | "faults"
    | "clock"
    | "signals"
    | "daily limit"
    | "refusals"
    | "state"
    | "malformed"
    | "bad input"
    | "hostile"
    | "record"
    | "trust"
    | "engine";
  /** the fault injected */
  fault: string;
  /** what passing the row proves, in the words an operator would use */
  proves: string;
  /** the vitest test name (unique) */
  test: string;
  /** the test file under test/reliability/ */
  file: string;
  /** how the daemon runs: in the test process with the simulator's ManualClock, or as a spawned CLI */
  mode: "in-process" | "process";
};

export const MATRIX: readonly ReliabilityCase[] = Object.freeze([
  // ---------------------------------------------------------------------------------------- outages
  {
    id: "outage-short",
    group: "outage",
    fault: "exchange blackholed for less than deadline − one interval",
    proves: "no trigger fires and the simulator's deadline never lapses; pushes resume after the outage",
    test: "behavior: outage shorter than deadline − interval leaves the switch armed",
    file: "outage.test.ts",
    mode: "in-process",
  },
  {
    id: "outage-long",
    group: "outage",
    fault: "exchange blackholed for longer than the deadline",
    proves:
      "exactly one trigger, counted identically by the ledger and the simulator; an exposure poll follows at once; re-armed after",
    test: "behavior: outage longer than the deadline counts exactly one trigger",
    file: "outage.test.ts",
    mode: "in-process",
  },
  // ---------------------------------------------------------------------------------------- HTTP faults
  {
    id: "http-5xx",
    group: "faults",
    fault: "bursts of HTTP 500, 502 and 503",
    proves: "every accepted action sets a deadline no earlier than the one confirmed before; still armed",
    test: "behavior: 500/502/503 bursts never move the deadline earlier",
    file: "faults.test.ts",
    mode: "in-process",
  },
  {
    id: "http-429",
    group: "faults",
    fault: "HTTP 429 on every exchange request",
    proves: "the daemon backs off (request count bounded, growing gaps) and re-arms when the limit lifts",
    test: "behavior: 429 is answered with back-off, not a retry storm",
    file: "faults.test.ts",
    mode: "in-process",
  },
  {
    id: "conn-reset",
    group: "faults",
    fault: "connections reset by the peer",
    proves: "resets are retried with fresh nonces; deadlines only move forward",
    test: "behavior: connection resets never move the deadline earlier",
    file: "faults.test.ts",
    mode: "in-process",
  },
  {
    id: "slow-responses",
    group: "faults",
    fault: "every response slower than the push interval",
    proves: "pushes never overlap, a late answer never moves the deadline earlier",
    test: "behavior: responses slower than the interval never move the deadline earlier",
    file: "faults.test.ts",
    mode: "in-process",
  },
  {
    id: "blackhole",
    group: "faults",
    fault: "requests accepted and never answered",
    proves: "each push times out and is retried; no deadline regression; armed again when the path heals",
    test: "behavior: a blackhole never moves the deadline earlier",
    file: "faults.test.ts",
    mode: "in-process",
  },
  // ---------------------------------------------------------------------------------------- clock
  {
    id: "skew-plus",
    group: "clock",
    fault: "local clock 3 s ahead of the simulator",
    proves:
      "still armed with the full deadline ahead on the exchange's clock; the skew is measured and reported",
    test: "behavior: local clock +3 s still armed, skew reported",
    file: "clock.test.ts",
    mode: "in-process",
  },
  {
    id: "skew-minus",
    group: "clock",
    fault: "local clock 3 s behind the simulator",
    proves: "still armed (pushes not refused as too early); the skew is measured and reported",
    test: "behavior: local clock −3 s still armed, skew reported",
    file: "clock.test.ts",
    mode: "in-process",
  },
  // issue 25: a wrong Date in front of the exchange (the simulator's Date fault), the real CLI
  {
    id: "date-behind",
    group: "clock",
    fault: "every answer's Date 120 s behind the exchange (a proxy's clock)",
    proves:
      "the Date is refused and logged (clock.date_refused), every push is accepted a full deadline ahead, nothing fires; ready because armed",
    test: "behavior: Date 120 s behind on every answer: pushes accepted, nothing fires, ready only while armed",
    file: "date-process.test.ts",
    mode: "process",
  },
  {
    id: "date-midnight",
    group: "clock",
    fault:
      "Date 20 h ahead for a 3 s window across 00:00 UTC (libfaketime: both clocks just before midnight)",
    proves:
      "no early roll-over and no schedule 20 h ahead; the next day's real fire is counted on that day (not skipped)",
    test: "behavior: Date 20 h ahead for 3 s across 00:00 UTC: no early roll-over, the next day's fire is counted",
    file: "date-process.test.ts",
    mode: "process",
  },
  {
    id: "date-future",
    group: "clock",
    fault: "Date 36 h ahead for 4 s",
    proves:
      "no nonce or updatedAt from the window is persisted; pushes, the removal at SIGTERM and a restart are all accepted",
    test: "behavior: Date 36 h ahead for 4 s: no future nonce or updatedAt persisted, the removal and a restart work",
    file: "date-process.test.ts",
    mode: "process",
  },
  {
    id: "date-absurd",
    group: "clock",
    fault: "Date `Sat, 13 Sep 275760 00:00:00 GMT`, then garbage, on every answer",
    proves: "refused and logged (out_of_range, not_a_date), no crash, the pushes go on, exit 0 at SIGTERM",
    test: "behavior: Date in the year 275760: refused and logged, no crash, the pushes go on",
    file: "date-process.test.ts",
    mode: "process",
  },
  {
    id: "daily-limit",
    group: "daily limit",
    fault: "the daily trigger limit reached, then 00:00 UTC",
    proves: "exhausted and not ready (/readyz 503) until midnight UTC, then armed again with the count reset",
    test: "behavior: daily limit → exhausted and not ready, armed again after 00:00 UTC",
    file: "clock.test.ts",
    mode: "in-process",
  },
  // ---------------------------------------------------------------------------------------- signals
  {
    id: "sigkill",
    group: "signals",
    fault: "SIGKILL while armed",
    proves: "the simulator fires at the deadline; a restart counts the trigger in the ledger and re-arms",
    test: "behavior: SIGKILL while armed → sim fires, restart counts it and re-arms",
    file: "signals.test.ts",
    mode: "process",
  },
  {
    id: "sigterm",
    group: "signals",
    fault: "SIGTERM",
    proves: "the schedule is removed, `shutdown.removed` logged, exit 0 well within the shutdown bound",
    test: "behavior: SIGTERM removes the schedule and exits 0",
    file: "signals.test.ts",
    mode: "process",
  },
  {
    id: "sigint",
    group: "signals",
    fault: "SIGINT (Ctrl-C, pm2 stop)",
    proves: "the schedule is removed, exit 0",
    test: "behavior: SIGINT removes the schedule and exits 0",
    file: "signals.test.ts",
    mode: "process",
  },
  {
    id: "double-signal",
    group: "signals",
    fault: "two signals in quick succession while the removal is stuck",
    proves: "the second signal exits at once with 128 + signal, without waiting for the shutdown bound",
    test: "behavior: a second signal exits at once",
    file: "signals.test.ts",
    mode: "process",
  },
  {
    id: "shutdown-keep",
    group: "signals",
    fault: "SIGTERM with --on-shutdown keep",
    proves: "the schedule stays armed in the simulator, `shutdown.kept` logged, exit 0",
    test: "behavior: --on-shutdown keep leaves the schedule armed",
    file: "signals.test.ts",
    mode: "process",
  },
  // ---------------------------------------------------------------------------------------- permanent refusals
  {
    id: "volume-gate",
    group: "refusals",
    fault: "the account has not traded the $1M the exchange requires",
    proves: "NOT PROTECTED reported (state, log, metric, /readyz) and no retry storm (requests counted)",
    test: "behavior: volume gate → not protected, no retry storm",
    file: "refusals.test.ts",
    mode: "in-process",
  },
  {
    id: "unknown-signer",
    group: "refusals",
    fault: "the key is neither a user nor an approved agent",
    proves: "NOT PROTECTED reported and no retry storm",
    test: "behavior: unknown signer → not protected, no retry storm",
    file: "refusals.test.ts",
    mode: "in-process",
  },
  {
    id: "vault-not-registered",
    group: "refusals",
    fault: "--vault names a vault the signer's user does not own",
    proves: "NOT PROTECTED reported and no retry storm",
    test: "behavior: vault not registered → not protected, no retry storm",
    file: "refusals.test.ts",
    mode: "in-process",
  },
  {
    id: "address-budget",
    group: "refusals",
    fault: "the address's cumulative request budget is spent",
    proves: "NOT PROTECTED reported and no retry storm",
    test: "behavior: address budget exhausted → not protected, no retry storm",
    file: "refusals.test.ts",
    mode: "in-process",
  },
  // ---------------------------------------------------------------------------------------- state directory
  {
    id: "state-read-only",
    group: "state",
    fault: "state directory turned read-only (chmod 500) while running (read-only at start: exit 73)",
    proves:
      "the write failure is logged with the path, the daemon keeps protecting, the old ledger is intact",
    test: "behavior: read-only state dir → logged, still protecting, old ledger intact",
    file: "state.test.ts",
    mode: "process",
  },
  {
    id: "state-full",
    group: "state",
    fault: "ledger cannot be written (its path is a directory: a stand-in for ENOSPC)",
    proves: "the write failure is logged, the daemon keeps protecting, nothing in the state dir is destroyed",
    test: "behavior: unwritable ledger → logged, still protecting",
    file: "state.test.ts",
    mode: "process",
  },
  {
    id: "ledger-corrupt",
    group: "state",
    fault: "ledger.json is not JSON",
    proves:
      "a clear error, the file moved aside byte for byte (not deleted), no silent reset to zero, still protecting",
    test: "behavior: corrupt ledger → clear message, kept aside, no silent reset",
    file: "state.test.ts",
    mode: "process",
  },
  {
    id: "ledger-truncated",
    group: "state",
    fault: "ledger.json cut off mid-write",
    proves: "same as corrupt: kept aside, conservative count, still protecting",
    test: "behavior: truncated ledger → clear message, kept aside, no silent reset",
    file: "state.test.ts",
    mode: "process",
  },
  // ---------------------------------------------------------------------------------------- malformed
  {
    id: "malformed-exchange",
    group: "malformed",
    fault: "/exchange answers bad JSON, the wrong shape, and a multi-MB body",
    proves: "each is logged as heartbeat.failed (malformed_response), the daemon survives and re-arms",
    test: "behavior: malformed /exchange answers are logged and survived",
    file: "malformed.test.ts",
    mode: "in-process",
  },
  {
    id: "malformed-info",
    group: "malformed",
    fault: "/info answers bad JSON, the wrong shape, and a multi-MB body",
    proves: "each is logged as exposure.failed, the heartbeat is unaffected, the next poll succeeds",
    test: "behavior: malformed /info answers are logged and survived",
    file: "malformed.test.ts",
    mode: "in-process",
  },
  {
    id: "malformed-evm",
    group: "malformed",
    fault: "/evm (the chain watch's JSON-RPC) answers bad JSON, the wrong shape, and a multi-MB body",
    proves: "each is logged as chain.error, the heartbeat is unaffected, the watch catches up after",
    test: "behavior: malformed /evm answers are logged and survived",
    file: "malformed.test.ts",
    mode: "in-process",
  },
  // ---------------------------------------------------------------------------------------- bad input
  {
    id: "bad-flags",
    group: "bad input",
    fault: "unknown flags, bad enum values, --private-key",
    proves: "a message naming the flag, exit 2 (usage) or 78 (config value)",
    test: "error: bad flags",
    file: "input.test.ts",
    mode: "process",
  },
  {
    id: "bad-env",
    group: "bad input",
    fault: "bad HL_* environment values",
    proves: "a message naming the variable and value, exit 78",
    test: "error: bad environment values",
    file: "input.test.ts",
    mode: "process",
  },
  {
    id: "bad-config-file",
    group: "bad input",
    fault: "config file missing, not JSON, unknown key, wrong types",
    proves: "a message naming the file and the key, exit 78",
    test: "error: bad config file",
    file: "input.test.ts",
    mode: "process",
  },
  {
    id: "bad-address",
    group: "bad input",
    fault: "malformed --account / --vault addresses",
    proves: "a message naming the address, exit 78, nothing sent",
    test: "error: bad addresses",
    file: "input.test.ts",
    mode: "process",
  },
  {
    id: "bad-key",
    group: "bad input",
    fault: "missing key, not 32-byte hex",
    proves: "exit 78, the message says where it looked, the key text never appears in any output",
    test: "error: bad keys",
    file: "input.test.ts",
    mode: "process",
  },
  {
    id: "key-permissions",
    group: "bad input",
    fault: "key file readable by group or others",
    proves: "refused with the file, its mode and `chmod 600` named, exit 78",
    test: "error: key file permissions",
    file: "input.test.ts",
    mode: "process",
  },
  {
    id: "bad-durations",
    group: "bad input",
    fault: "unparseable durations, deadline too short, interval too long for the deadline",
    proves: "a message naming the key, the value and the rule, exit 78",
    test: "error: bad durations",
    file: "input.test.ts",
    mode: "process",
  },
  // ---------------------------------------------------------------------------------------- hostile input (issue 16)
  {
    id: "hostile-info-nested",
    group: "hostile",
    fault: "/info answers an 8 MB deeply nested JSON array (under the heap cap of the shipped units)",
    proves:
      "refused before JSON.parse as malformed_response, one exposure.failed line per poll; no heap abort",
    test: "behavior: an 8 MB nested JSON array from /info is a typed error, logged once per poll",
    file: "hostile.test.ts",
    mode: "process",
  },
  {
    id: "hostile-exchange-huge",
    group: "hostile",
    fault: "/exchange answers a 10 MB body",
    proves:
      "refused at the 1 MiB exchange cap as malformed_response, one heartbeat.failed line per push; no heap abort",
    test: "behavior: a 10 MB body from /exchange is a typed error, logged once per push",
    file: "hostile.test.ts",
    mode: "process",
  },
  {
    id: "hostile-evm-gzip-bomb",
    group: "hostile",
    fault: "the EVM RPC answers a 1 MiB gzip body that expands to 1 GiB",
    proves:
      "read only up to the 8 MiB cap counted after decompression; chain.error names it; the daemon keeps protecting",
    test: "behavior: a 1 MiB gzip expanding to 1 GiB from the EVM RPC is a typed error, never read past the cap",
    file: "hostile.test.ts",
    mode: "process",
  },
  {
    id: "ledger-dev-zero",
    group: "hostile",
    fault: "ledger.json (the single-file layout, to be migrated) is a symlink to /dev/zero",
    proves: "never followed: moved aside, the daily limit assumed, pushes continue",
    test: "behavior: a ledger symlinked to /dev/zero is moved aside, the limit assumed",
    file: "hostile.test.ts",
    mode: "process",
  },
  {
    id: "ledger-fifo",
    group: "hostile",
    fault: "ledger.json (the single-file layout, to be migrated) is a FIFO",
    proves: "start-up never blocks: moved aside, the daily limit assumed, health answers",
    test: "behavior: a FIFO as the ledger never blocks start-up",
    file: "hostile.test.ts",
    mode: "process",
  },
  {
    id: "ledger-account-dev-zero",
    group: "hostile",
    fault: "an account's file of the per-account ledger (ledger/<account>.json) is a symlink to /dev/zero",
    proves: "never followed: moved aside, the daily limit assumed for that account, pushes continue",
    test: "behavior: an account's ledger file symlinked to /dev/zero is moved aside, the limit assumed",
    file: "hostile.test.ts",
    mode: "process",
  },
  {
    id: "ledger-account-fifo",
    group: "hostile",
    fault: "an account's file of the per-account ledger (ledger/<account>.json) is a FIFO",
    proves: "start-up never blocks: moved aside, the daily limit assumed for that account, health answers",
    test: "behavior: a FIFO as an account's ledger file never blocks start-up",
    file: "hostile.test.ts",
    mode: "process",
  },
  {
    id: "ledger-huge",
    group: "hostile",
    fault: "a schema-valid 38 MB ledger (300,000 history entries)",
    proves: "refused by size before it is parsed: moved aside, the daily limit assumed; no heap abort",
    test: "behavior: a schema-valid 38 MB ledger is refused by size before it is parsed",
    file: "hostile.test.ts",
    mode: "process",
  },
  {
    id: "second-daemon",
    group: "hostile",
    fault: "a second daemon started on the same state directory",
    proves: "it exits 75 naming the first one's pid before doing anything; the lock is released on exit",
    test: "behavior: a second daemon on the same state directory exits 75 naming the holder's pid",
    file: "hostile.test.ts",
    mode: "process",
  },
  {
    id: "stale-lock",
    group: "hostile",
    fault: "the state directory's lock was left by a daemon that is gone",
    proves: "taken over at start with one warning naming the dead pid",
    test: "behavior: a lock left by a killed daemon is taken over, with a warning naming its pid",
    file: "hostile.test.ts",
    mode: "process",
  },
  {
    id: "key-environ",
    group: "hostile",
    fault: "the key given in HL_PRIVATE_KEY",
    proves:
      "/proc/PID/environ of the running daemon holds only HL_PRIVATE_KEY=****; the rest of the environment is untouched",
    test: "behavior: the key is not in /proc/<pid>/environ of the running daemon",
    file: "hostile.test.ts",
    mode: "process",
  },
  {
    id: "config-error-output",
    group: "hostile",
    fault:
      "no key, a bare-number HL_INTERVAL, a malformed key, under a service manager (stdout not a terminal)",
    proves: "exit 78 with nothing on stdout and exactly one JSON error line in the log format",
    test: "behavior: nothing on stdout before a configuration or key error; one JSON error line",
    file: "hostile.test.ts",
    mode: "process",
  },
  // ------------------------------------------------------- the exchange's record, the agent, the cancel mode
  {
    id: "record-recover",
    group: "record",
    fault: "SIGKILL while armed, the simulator fires, the ledger is deleted",
    proves:
      "the restart reads the exchange's record (explorer userDetails + historicalOrders) and counts the trigger again (`ledger.reconciled`), once",
    test: "behavior: SIGKILL, a fire and a deleted ledger: the restart recovers the count from the record",
    file: "record-process.test.ts",
    mode: "process",
  },
  {
    id: "record-down",
    group: "record",
    fault: "the explorer (record host) answers HTTP 500 from start-up on, then a lapse",
    proves:
      "`record.unavailable` said once; pushes, the lapse count (ledger = simulator) and readiness are as without a record",
    test: "behavior: the record host down is said once and changes nothing else",
    file: "record.test.ts",
    mode: "in-process",
  },
  {
    id: "agent-removed",
    group: "record",
    fault: "the signing API wallet deregistered mid-run (POST /admin/agents/remove)",
    proves: "NOT PROTECTED (`agent_missing`) within one agent check, /readyz 503, no more pushes",
    test: "behavior: an agent removed mid-run is NOT PROTECTED within one check, and /readyz says so",
    file: "record.test.ts",
    mode: "in-process",
  },
  {
    id: "cancel-mode",
    group: "record",
    fault: "guard file stale with --on-engine-down cancel",
    proves:
      "open orders cancelled, the reduce-only stop kept, no trigger spent (simulator and ledger), `orders.cancelled` logged and counted",
    test: "behavior: --on-engine-down cancel cancels open orders, keeps reduce-only stops, spends no trigger",
    file: "record.test.ts",
    mode: "in-process",
  },
  {
    id: "cancel-stops",
    group: "record",
    fault: "guard file stale with --on-engine-down cancel --cancel-stops",
    proves: "every open order cancelled, the reduce-only stops too, still no trigger spent",
    test: "behavior: --cancel-stops also cancels the reduce-only stops, still without a trigger",
    file: "record.test.ts",
    mode: "in-process",
  },
  {
    id: "removal-gate",
    group: "record",
    fault: "SIGTERM on an account below the $1M volume gate (nothing could be armed)",
    proves: "`shutdown.nothing_armed` logged, exit 0",
    test: "behavior: SIGTERM under the volume gate logs shutdown.nothing_armed and exits 0",
    file: "record-process.test.ts",
    mode: "process",
  },
  // --------------------------------------------- only the exchange can disarm the switch (issue 25)
  {
    id: "guess-withdrawn",
    group: "trust",
    fault:
      "pushes applied but never answered (simulator `dropAnswer`) for longer than the deadline, twice, on top of nine such guesses earlier today",
    proves:
      "each lapse is a guess: the count reaches the limit (`trigger.limit_suspected`), never `trigger.exhausted`; pushes go on; the simulator fires nothing; the record listing the pushes accepted withdraws this run's guesses (`status --json` shows each proof)",
    test: "behavior: pushes applied but unanswered past the deadline are guesses: no exhaustion, pushes go on, the record withdraws them",
    file: "trust.test.ts",
    mode: "process",
  },
  {
    id: "record-lies",
    group: "trust",
    fault:
      "the explorer lists ten accepted, lapsed schedules with no cancelled orders (simulator `recordFakeLapses`)",
    proves:
      "counted beside as record-implied (`proofs.record`, limit suspected), never exhaustion: no `trigger.exhausted`, pushes continue, nothing fires",
    test: "behavior: a record of ten accepted lapsed schedules without orders is not exhaustion: pushes go on",
    file: "trust.test.ts",
    mode: "process",
  },
  {
    id: "record-lags",
    group: "trust",
    fault:
      "the explorer lags 20 s, twice the deadline (simulator `recordLagMs`); SIGTERM removes the schedule; restart",
    proves:
      "at the restart the lagging record's last listed push seems to have lapsed (the later pushes and the removal are not listed yet): not counted, no phantom trigger",
    test: "behavior: a record lagging 20 s (twice the deadline) never counts the schedule removed at a graceful stop as a fire",
    file: "trust.test.ts",
    mode: "process",
  },
  {
    id: "cancel-repeat",
    group: "trust",
    fault: "guard file stale with --on-engine-down cancel; an order placed after the first cancel",
    proves:
      "open orders are cancelled again each interval while the engine stays down (`engine.orders_cancelled` with its pass); no trigger spent",
    test: "behavior: --on-engine-down cancel cancels again each interval: an order placed after the first cancel is cancelled",
    file: "trust.test.ts",
    mode: "process",
  },
  // --------------------------------------------- the fast cancel path (issue 28)
  {
    id: "cancel-refused",
    group: "record",
    fault: "guard file stale with --on-engine-down cancel; every cancel action answered HTTP 503",
    proves:
      "`engine.cancel_failed`, then the expedite backstop: a push at the 5 s minimum, the exchange cancels every order (one trigger)",
    test: "behavior: the cancel refused (HTTP 503) falls back to the expedite: the exchange cancels at the 5 s minimum",
    file: "cancel.test.ts",
    mode: "in-process",
  },
  {
    id: "cancel-unanswered",
    group: "record",
    fault: "guard file stale with --on-engine-down cancel; every cancel action blackholed",
    proves:
      "the cancel times out, `engine.cancel_failed`, then the expedite backstop: one trigger, the orders gone",
    test: "behavior: the cancel unanswered (blackholed) falls back to the expedite: one trigger, the orders gone",
    file: "cancel.test.ts",
    mode: "in-process",
  },
  {
    id: "fast-trigger-refused",
    group: "record",
    fault:
      "guard file stale with --on-engine-down cancel --cancel-stops; an entry stop and a reduce-only stop among the orders (the simulator refuses a fast cancel of a trigger order)",
    proves:
      "two actions: the resting orders with `f: true`, the trigger orders without; every status success, no trigger spent",
    test: "behavior: trigger orders go in a normal cancel, never a fast one (the simulator refuses that); no trigger spent",
    file: "cancel.test.ts",
    mode: "in-process",
  },
  // --------------------------------------------- cancel on disconnect (issue 28)
  {
    id: "engine-crash",
    group: "engine",
    fault: "trading engine holding --guard-socket killed with SIGKILL, --on-engine-down cancel",
    proves:
      "the kernel's close is engine down for the account it named at once (`engine.down`), its open orders cancelled, no trigger spent",
    test: "behavior: engine SIGKILL → engine down for its account at once, open orders cancelled, no trigger",
    file: "engine.test.ts",
    mode: "process",
  },
  {
    id: "engine-hang",
    group: "engine",
    fault: "engine stopped with SIGSTOP, --guard-heartbeat-gap 600ms",
    proves: "silence past the gap is engine down (`no heartbeat for … ms`), orders cancelled, no trigger",
    test: "behavior: engine hung (SIGSTOP) past --guard-heartbeat-gap → engine down, orders cancelled",
    file: "engine.test.ts",
    mode: "process",
  },
  {
    id: "engine-clean-exit",
    group: "engine",
    fault: "engine closes its connection and exits 0",
    proves: "a clean exit without `detach` is engine down: orders cancelled, no trigger",
    test: "behavior: engine clean exit (close) → engine down, orders cancelled, no trigger",
    file: "engine.test.ts",
    mode: "process",
  },
  {
    id: "engine-detach",
    group: "engine",
    fault: "engine sends `detach 5000`, exits, a new engine connects",
    proves: "`guard.engine_detached`, then up: no engine down, orders kept",
    test: "behavior: detach then restart within the grace → no engine down, orders kept",
    file: "engine.test.ts",
    mode: "process",
  },
  {
    id: "engine-daemon-restart",
    group: "engine",
    fault: "daemon stopped (SIGTERM) and started again while the engine stays up",
    proves:
      "the engine reconnects to the new daemon (which starts `waiting`): no engine down in either, orders kept, no trigger",
    test: "behavior: daemon restarted while the engine stays up → the engine reconnects, nothing cancelled",
    file: "engine.test.ts",
    mode: "process",
  },
  {
    id: "engine-flapping",
    group: "engine",
    fault: "the engine's connection opened and closed five times",
    proves:
      "each close is engine down and each return up; orders cancelled, pushes go on, the deadline never moves earlier, no trigger",
    test: "behavior: a flapping engine connection → down and up each time, pushes go on, no trigger, deadline never earlier",
    file: "engine.test.ts",
    mode: "process",
  },
  {
    id: "engine-second-connection",
    group: "engine",
    fault: "two engines hold the same account; one killed, then the other",
    proves: "the account stays up while either holds it; down (and cancelled) when both are gone",
    test: "behavior: a second engine connection for the same account → down only when both are gone",
    file: "engine.test.ts",
    mode: "process",
  },
]);

/** The row with this id (throws on a typo, so a test cannot report a row that does not exist). */
export function caseById(id: string): ReliabilityCase {
  const row = MATRIX.find((r) => r.id === id);
  if (!row) throw new Error(`no reliability case "${id}"`);
  return row;
}
