/**
 * Every Prometheus metric of the daemon, defined once (prefix `hl_deadman_`, base units, `_total` counters,
 * `_seconds`, `_timestamp_seconds`), labelled by account (and coin for positions). Each part of the daemon
 * (switch, ledger, exposure, guard, chain watch) gets this object and sets its own metrics.
 */
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";

export const METRIC_PREFIX = "hl_deadman_";

/**
 * Sampling period (ms) of prom-client's event-loop-lag histogram. Its default, 10 ms, wakes the process 100
 * times a second, which alone costs ~20 CPU-seconds per hour — more than everything else the daemon does at
 * the default cadence (BENCHMARKS.md). Each sample still measures lag to the millisecond; the daemon's own
 * loop detects stalls (`loop.stalled`) independently.
 */
export const EVENT_LOOP_SAMPLE_MS = 1_000;

export function createMetrics({ registry = new Registry(), defaultMetrics = true } = {}) {
  if (defaultMetrics)
    collectDefaultMetrics({
      register: registry,
      prefix: METRIC_PREFIX,
      eventLoopMonitoringPrecision: EVENT_LOOP_SAMPLE_MS,
    });
  const r = [registry];
  const p = METRIC_PREFIX;
  return {
    registry,
    // --- the switch
    armedDeadline: new Gauge({
      name: `${p}armed_deadline_timestamp_seconds`,
      help: "Cancel time of the last confirmed push (Unix seconds); 0 when not armed.",
      labelNames: ["account"],
      registers: r,
    }),
    protectionLeft: new Gauge({
      name: `${p}protection_left_seconds`,
      help: "Seconds until the armed deadline lapses (negative when it has passed).",
      labelNames: ["account"],
      registers: r,
    }),
    pushes: new Counter({
      name: `${p}pushes_total`,
      help: "scheduleCancel pushes by outcome (ok, or the error kind).",
      labelNames: ["account", "outcome"],
      registers: r,
    }),
    pushLatency: new Histogram({
      name: `${p}push_duration_seconds`,
      help: "Latency of scheduleCancel pushes.",
      labelNames: ["account"],
      buckets: [0.025, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10],
      registers: r,
    }),
    triggersToday: new Gauge({
      name: `${p}triggers_today`,
      help: "Triggers counted in the current UTC day.",
      labelNames: ["account"],
      registers: r,
    }),
    triggersLeft: new Gauge({
      name: `${p}triggers_left`,
      help: "Triggers left in the current UTC day.",
      labelNames: ["account"],
      registers: r,
    }),
    triggersTotal: new Counter({
      name: `${p}triggers_total`,
      help: "Triggers counted since the process started.",
      labelNames: ["account"],
      registers: r,
    }),
    exhausted: new Gauge({
      name: `${p}trigger_budget_exhausted`,
      help: "1 when the daily trigger limit is reached (cannot protect until 00:00 UTC).",
      labelNames: ["account"],
      registers: r,
    }),
    notProtected: new Gauge({
      name: `${p}not_protected`,
      help: "1 when the account is refused permanently (volume gate, unknown signer, ...); reason as label.",
      labelNames: ["account", "reason"],
      registers: r,
    }),
    engineUp: new Gauge({
      name: `${p}engine_up`,
      help: "Engine guard state: 1 up, 0 down; absent when no guard is configured.",
      labelNames: ["guard"],
      registers: r,
    }),
    eventLoopStalls: new Counter({
      name: `${p}event_loop_stalls_total`,
      help: "Times the push loop woke up much later than planned (host suspended, loop blocked).",
      registers: r,
    }),
    // --- the address's lifetime action budget (userRateLimit)
    addressRequestsUsed: new Gauge({
      name: `${p}address_requests_used`,
      help: "Actions the address has used of its lifetime budget (userRateLimit.nRequestsUsed).",
      labelNames: ["account"],
      registers: r,
    }),
    addressRequestsCap: new Gauge({
      name: `${p}address_requests_cap`,
      help: "The address's lifetime action budget (nRequestsCap + nRequestsSurplus).",
      labelNames: ["account"],
      registers: r,
    }),
    addressRequestsLeft: new Gauge({
      name: `${p}address_requests_left`,
      help: "Actions left before the address is throttled to one request per 10 s.",
      labelNames: ["account"],
      registers: r,
    }),
    addressBudgetDaysLeft: new Gauge({
      name: `${p}address_budget_days_left`,
      help: "Days until the action budget runs out at this daemon's push rate alone (-1: no pushes).",
      labelNames: ["account"],
      registers: r,
    }),
    // --- the agent watch and the cancel mode (docs/exchange-record.md)
    agentValidUntil: new Gauge({
      name: `${p}agent_valid_until_timestamp_seconds`,
      help: "When the signing API wallet expires (extraAgents validUntil, Unix seconds); 0 when unknown or missing.",
      labelNames: ["account", "agent"],
      registers: r,
    }),
    ordersCancelled: new Counter({
      name: `${p}orders_cancelled_total`,
      help: "Open orders the daemon cancelled itself (engine-down policy cancel); spends no trigger.",
      labelNames: ["account"],
      registers: r,
    }),
    ordersKept: new Counter({
      name: `${p}orders_kept_total`,
      help: "Reduce-only TP/SL orders the cancel mode left in place.",
      labelNames: ["account"],
      registers: r,
    }),
    // --- exposure
    accountValue: new Gauge({
      name: `${p}account_value_usd`,
      help: "marginSummary.accountValue.",
      labelNames: ["account", "dex"],
      registers: r,
    }),
    totalNotional: new Gauge({
      name: `${p}total_notional_usd`,
      help: "marginSummary.totalNtlPos.",
      labelNames: ["account", "dex"],
      registers: r,
    }),
    marginUsed: new Gauge({
      name: `${p}margin_used_usd`,
      help: "marginSummary.totalMarginUsed.",
      labelNames: ["account", "dex"],
      registers: r,
    }),
    withdrawable: new Gauge({
      name: `${p}withdrawable_usd`,
      help: "withdrawable.",
      labelNames: ["account", "dex"],
      registers: r,
    }),
    leverage: new Gauge({
      name: `${p}leverage_ratio`,
      help: "Total notional / account value.",
      labelNames: ["account", "dex"],
      registers: r,
    }),
    positionSize: new Gauge({
      name: `${p}position_size`,
      help: "Signed position size (szi).",
      labelNames: ["account", "dex", "coin"],
      registers: r,
    }),
    positionValue: new Gauge({
      name: `${p}position_value_usd`,
      help: "Position value.",
      labelNames: ["account", "dex", "coin"],
      registers: r,
    }),
    liquidationDistance: new Gauge({
      name: `${p}liquidation_distance_ratio`,
      help: "Distance from mark to liquidation price, as a fraction of the mark price.",
      labelNames: ["account", "dex", "coin"],
      registers: r,
    }),
    clockSteps: new Counter({
      name: `${p}clock_steps_total`,
      help: "Wall-clock steps detected (the wall clock and the monotonic clock disagree).",
      registers: r,
    }),
    clockSkew: new Gauge({
      name: `${p}clock_skew_seconds`,
      help: "Estimated local clock minus exchange clock.",
      registers: r,
    }),
    pollDuration: new Histogram({
      name: `${p}exposure_poll_duration_seconds`,
      help: "Duration of one exposure poll (all chunks).",
      buckets: [0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10],
      registers: r,
    }),
    pollFailures: new Counter({
      name: `${p}exposure_poll_failures_total`,
      help: "Failed exposure polls.",
      registers: r,
    }),
    lastPoll: new Gauge({
      name: `${p}exposure_last_success_timestamp_seconds`,
      help: "Time of the last successful exposure poll.",
      registers: r,
    }),
    // --- chain watch
    chainHeadLag: new Gauge({
      name: `${p}chain_head_lag_seconds`,
      help: "Now minus the timestamp of the newest HyperEVM block seen.",
      registers: r,
    }),
    chainHead: new Gauge({
      name: `${p}chain_head_block`,
      help: "Newest HyperEVM block number seen.",
      registers: r,
    }),
    chainBlocksSkipped: new Counter({
      name: `${p}chain_blocks_skipped_total`,
      help: "Blocks skipped because the watch fell too far behind.",
      registers: r,
    }),
    chainWatchedTxs: new Counter({
      name: `${p}chain_watched_transactions_total`,
      help: "Transactions from or to a watched address, by receipt status.",
      labelNames: ["status"],
      registers: r,
    }),
    build: new Gauge({
      name: `${p}build_info`,
      help: "Build information (always 1).",
      labelNames: ["version", "node"],
      registers: r,
    }),
  };
}

export type Metrics = ReturnType<typeof createMetrics>;
