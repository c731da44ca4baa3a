/**
 * Every Prometheus metric of the daemon, defined once (prefix `hl_deadman_`, base units, `_total` counters,
 * `_seconds`, `_timestamp_seconds`), labelled by account (and coin for positions). Each part of the daemon
 * (switch, ledger, exposure, guard, chain watch) gets this object and sets its own metrics.
 */
import { createHistogram, performance, type RecordableHistogram } from "node:perf_hooks";
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";
import { type Clock, systemClock } from "../core/clock.js";

export const METRIC_PREFIX = "hl_deadman_";

/**
 * The event loop's delay, without a timer of its own. prom-client's `nodejs_eventloop_lag_{min,max,mean,stddev,
 * p50,p90,p99}_seconds` come from perf_hooks.monitorEventLoopDelay, which wakes the process every `resolution` ms
 * to time its own lateness: at 1 s that alone costs about as much CPU as a whole idle node process
 * (BENCHMARKS.md, "CPU per hour"). The same seven gauges here read a histogram of how late the daemon's own timers
 * fire (the push loop with the clock watch, the lapse timers, the exposure and budget polls: src/core/runtime.ts
 * `systemTimers`), measured at wake-ups that happen anyway. That is the delay a push sees; a stall between two
 * timers shows in `event_loop_utilization_ratio` (time busy since the last scrape), and a late push loop in
 * `event_loop_stalls_total` and `loop.stalled` (docs/observability.md, "Event loop").
 *
 * prom-client still builds its monitor when its default metrics are collected; given this resolution (the
 * largest a timer takes, ~24.8 days; the timer is unref'd) it never samples, and its seven gauges are replaced.
 */
export const EVENT_LOOP_SAMPLE_MS = 2_147_483_647;

const LOOP_DELAY_STATS = [
  ["min", "Smallest", (h: RecordableHistogram) => h.min],
  ["max", "Largest", (h: RecordableHistogram) => h.max],
  ["mean", "Mean", (h: RecordableHistogram) => h.mean],
  ["stddev", "Standard deviation of the", (h: RecordableHistogram) => h.stddev],
  ["p50", "Median", (h: RecordableHistogram) => h.percentile(50)],
  ["p90", "90th percentile of the", (h: RecordableHistogram) => h.percentile(90)],
  ["p99", "99th percentile of the", (h: RecordableHistogram) => h.percentile(99)],
] as const;

/**
 * How late the daemon's timers fired since the last scrape. `record(lateMs)` is what `systemTimers` calls; the
 * seven gauges read the histogram once per scrape (the first gauge collected takes the figures and resets it;
 * the others of the same scrape read those figures), 0 when no timer came due.
 */
function loopDelayGauges(registry: Registry, prefix: string) {
  const histogram = createHistogram();
  let taken: Map<string, number> | null = null;
  const figures = () => {
    if (taken === null) {
      const empty = histogram.count === 0;
      taken = new Map(LOOP_DELAY_STATS.map(([stat, , of]) => [stat, empty ? 0 : of(histogram) / 1e9]));
      histogram.reset();
      // every gauge of one scrape is collected in the same synchronous pass (prom-client's Registry.metrics)
      queueMicrotask(() => {
        taken = null;
      });
    }
    return taken;
  };
  for (const [stat, what, ,] of LOOP_DELAY_STATS) {
    const name = `${prefix}nodejs_eventloop_lag_${stat}_seconds`;
    registry.removeSingleMetric(name);
    new Gauge({
      name,
      help: `${what} lateness of the daemon's timers since the last scrape, in seconds (the event loop's delay).`,
      registers: [registry],
      collect() {
        this.set(figures().get(stat) ?? 0);
      },
    });
  }
  let last = performance.eventLoopUtilization();
  new Gauge({
    name: `${prefix}event_loop_utilization_ratio`,
    help: "Share of the time since the last scrape the event loop spent running code (0-1).",
    registers: [registry],
    collect() {
      const now = performance.eventLoopUtilization();
      this.set(performance.eventLoopUtilization(now, last).utilization);
      last = now;
    },
  });
  return {
    /** Records one timer that fired `lateMs` after it was due (negative: on time). */
    record(lateMs: number): void {
      histogram.record(Math.max(1, Math.round(lateMs * 1e6)));
    },
  };
}

/**
 * Which per-account series are exported (docs/observability.md, "Series per account"): `all`, or `alerts`, only
 * those an alert rule or the status of an account needs. With `alerts` the exposure figures per account and coin
 * (account value, notional, margin, withdrawable, leverage, position size and value), the trigger count by proof and
 * the address budget's used and cap are kept out of the scrape (the liquidation distance, which two alerts read,
 * stays), and the push-latency histogram is one for the whole daemon (`account=""`).
 */
export type MetricsPerAccount = "all" | "alerts";

export function createMetrics({
  registry = new Registry(),
  defaultMetrics = true,
  clock = systemClock,
  perAccount = "all",
}: {
  registry?: Registry;
  defaultMetrics?: boolean;
  clock?: Clock;
  perAccount?: MetricsPerAccount;
} = {}) {
  if (defaultMetrics)
    collectDefaultMetrics({
      register: registry,
      prefix: METRIC_PREFIX,
      eventLoopMonitoringPrecision: EVENT_LOOP_SAMPLE_MS,
    });
  const loopDelay = defaultMetrics
    ? loopDelayGauges(registry, METRIC_PREFIX)
    : { record(_lateMs: number) {} };
  const r = [registry];
  // a detail series with `alerts` is still kept up to date (its setters are called), but in no registry: unscraped
  const detail = perAccount === "all" ? r : [];
  const p = METRIC_PREFIX;
  // The armed deadline per account (null: nothing armed) and the clock protection_left_seconds is read against
  // (the daemon's exchange time): that gauge is computed at each scrape, so it is never stale, and the switch sets
  // the deadline only when it changes (setting both at each step of the switch would be work for nothing).
  const armed = new Map<string, number | null>();
  let protectionNow: () => number = () => clock.now();
  // One account's engine as the connection guard sees it, one series per state (0/1). With `alerts` only the state
  // the account is in is exported (value 1): one series an account instead of four, and `== 1` alerts read the same.
  const engineStates = ["waiting", "up", "detached", "down"] as const;
  const engineState = new Gauge({
    name: `${p}engine_state`,
    help: "The connection guard's state of each account's engine (waiting, up, detached, down): 1 for the state it is in.",
    labelNames: ["account", "state"],
    registers: r,
  });
  const armedDeadline = new Gauge({
    name: `${p}armed_deadline_timestamp_seconds`,
    help: "Cancel time of the last confirmed push (Unix seconds); 0 when not armed.",
    labelNames: ["account"],
    registers: r,
  });
  return {
    registry,
    /** Feeds the event-loop delay gauges: how late each of the daemon's timers fired (src/core/runtime.ts). */
    recordTimerLateness: loopDelay.record,
    // --- the switch
    armedDeadline,
    protectionLeft: new Gauge({
      name: `${p}protection_left_seconds`,
      help: "Seconds until the armed deadline lapses, at the scrape (negative when it has passed; 0 when not armed).",
      labelNames: ["account"],
      registers: r,
      collect() {
        const now = protectionNow();
        for (const [account, until] of armed)
          this.set({ account }, until === null ? 0 : (until - now) / 1000);
      },
    }),
    /**
     * An account's armed deadline (ms; null when nothing is armed): armed_deadline_timestamp_seconds now, and
     * protection_left_seconds at each scrape. A value that did not change is not set again.
     */
    setArmedUntil(account: string, until: number | null): void {
      if (armed.get(account) === until && armed.has(account)) return;
      armed.set(account, until);
      armedDeadline.set({ account }, until === null ? 0 : until / 1000);
    },
    /** The clock protection_left_seconds is computed against (the daemon passes the exchange's time). */
    setProtectionClock(now: () => number): void {
      protectionNow = now;
    },
    pushes: new Counter({
      name: `${p}pushes_total`,
      help: "scheduleCancel pushes by outcome (ok, or the error kind).",
      labelNames: ["account", "outcome"],
      registers: r,
    }),
    pushLatency: pushLatencyOf(
      new Histogram({
        name: `${p}push_duration_seconds`,
        help: "Latency of scheduleCancel pushes.",
        labelNames: ["account"],
        buckets: [0.025, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10],
        registers: r,
      }),
      perAccount,
    ),
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
    triggersByProof: new Gauge({
      name: `${p}triggers_today_by_proof`,
      help: "Triggers counted in the current UTC day by what proves them (limit_error, orders, record, guess, unrecorded, assumed).",
      labelNames: ["account", "proof"],
      registers: detail,
    }),
    cancelPasses: new Counter({
      name: `${p}cancel_passes_total`,
      help: "Engine down with --on-engine-down cancel: passes that cancelled the open orders, by outcome (confirmed, failed, retried: refused and tried again).",
      labelNames: ["account", "outcome"],
      registers: r,
    }),
    halted: new Gauge({
      name: `${p}halted`,
      help: "1 while the account is HALTED: the escalation closed (or is closing) its positions; only `hl-deadman reset` releases it.",
      labelNames: ["account"],
      registers: r,
    }),
    closePasses: new Counter({
      name: `${p}close_passes_total`,
      help: "Escalation step 2: passes that closed positions reduce-only, by outcome (flat, incomplete).",
      labelNames: ["account", "outcome"],
      registers: r,
    }),
    exhausted: new Gauge({
      name: `${p}trigger_budget_exhausted`,
      help: "1 when the daily trigger limit is reached, proven by the exchange (cannot protect until 00:00 UTC).",
      labelNames: ["account"],
      registers: r,
    }),
    notProtected: new Gauge({
      name: `${p}not_protected`,
      help: "1 when the account is refused permanently (volume gate, unknown signer, ...); reason as label.",
      labelNames: ["account", "reason"],
      registers: r,
    }),
    coordinationLeader: new Gauge({
      name: `${p}coordination_leader`,
      help: "1 while this replica holds the coordination lease (--coordinate), else 0",
      registers: r,
    }),
    coordinationLost: new Gauge({
      name: `${p}coordination_lost`,
      help: "1 while etcd has not answered for a whole lease TTL (--coordinate): no gated action unless actAlone",
      registers: r,
    }),
    coordinationCandidates: new Gauge({
      name: `${p}coordination_candidates`,
      help: "Other live candidates in this replica's election (--coordinate)",
      registers: r,
    }),
    engineUp: new Gauge({
      name: `${p}engine_up`,
      help: "Engine guard: 0 while the engine is down (the connection guard: any account down), else 1; absent when no guard is configured. A waiting account is not down: see engine_state.",
      labelNames: ["guard"],
      registers: r,
    }),
    /** An account's engine state (the connection guard): its series of engine_state, bounded per `perAccount`. */
    setEngineState(account: string, state: (typeof engineStates)[number]): void {
      for (const other of engineStates) {
        if (other === state) engineState.set({ account, state: other }, 1);
        else if (perAccount === "all") engineState.set({ account, state: other }, 0);
        else engineState.remove({ account, state: other });
      }
    },
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
      registers: detail,
    }),
    addressRequestsCap: new Gauge({
      name: `${p}address_requests_cap`,
      help: "The address's lifetime action budget (nRequestsCap + nRequestsSurplus).",
      labelNames: ["account"],
      registers: detail,
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
      registers: detail,
    }),
    totalNotional: new Gauge({
      name: `${p}total_notional_usd`,
      help: "marginSummary.totalNtlPos.",
      labelNames: ["account", "dex"],
      registers: detail,
    }),
    marginUsed: new Gauge({
      name: `${p}margin_used_usd`,
      help: "marginSummary.totalMarginUsed.",
      labelNames: ["account", "dex"],
      registers: detail,
    }),
    withdrawable: new Gauge({
      name: `${p}withdrawable_usd`,
      help: "withdrawable.",
      labelNames: ["account", "dex"],
      registers: detail,
    }),
    leverage: new Gauge({
      name: `${p}leverage_ratio`,
      help: "Total notional / account value.",
      labelNames: ["account", "dex"],
      registers: detail,
    }),
    positionSize: new Gauge({
      name: `${p}position_size`,
      help: "Signed position size (szi).",
      labelNames: ["account", "dex", "coin"],
      registers: detail,
    }),
    positionValue: new Gauge({
      name: `${p}position_value_usd`,
      help: "Position value.",
      labelNames: ["account", "dex", "coin"],
      registers: detail,
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
    clockSuspect: new Gauge({
      name: `${p}clock_suspect`,
      help: "1 while the local clock and the exchange's time (its Date answers) disagree beyond 5 s (clock.suspect).",
      labelNames: ["account"],
      registers: r,
    }),
    clockVerified: new Gauge({
      name: `${p}clock_verified`,
      help: "1 while two outside witnesses (answers' Date with the HyperEVM block time, or with the exchange's acceptance of a push planned on it) agree on the exchange's time; 0: not ready. The local clock is never a witness.",
      labelNames: ["account"],
      // detail: an unverified clock fails readiness, which the alert rules read already
      registers: detail,
    }),
    clockDatesRefused: new Counter({
      name: `${p}clock_dates_refused_total`,
      help: "Answers whose Date was refused (not a date, out of range, outside the verified window): never applied.",
      labelNames: ["account", "reason"],
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

/** The push-latency histogram: per account with `all`, one for the daemon (`account=""`) with `alerts`. */
function pushLatencyOf(histogram: Histogram<"account">, perAccount: MetricsPerAccount) {
  return {
    observe(labels: { account: string }, seconds: number): void {
      histogram.observe({ account: perAccount === "all" ? labels.account : "" }, seconds);
    },
  };
}

/** Above this many accounts, `metricsPerAccount: auto` exports only the series alerts need. */
export const METRICS_ALL_UP_TO = 100;

/** `auto`: every per-account series up to METRICS_ALL_UP_TO accounts, only those alerts need above. */
export function metricsPerAccount(mode: "auto" | MetricsPerAccount, accounts: number): MetricsPerAccount {
  if (mode !== "auto") return mode;
  return accounts > METRICS_ALL_UP_TO ? "alerts" : "all";
}
