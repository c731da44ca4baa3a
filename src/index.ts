/** The library surface of hl-deadman (package.json "exports" ".") — snapshotted by test/index.test.ts. */

export { type Daemon, planAccounts, type StartDaemonParameters, startDaemon } from "./app/daemon.js";
export { installShutdownHandlers } from "./app/shutdown.js";
export { KeyError, type KeySource, loadSigningKey } from "./config/keys.js";
export {
  CONFIG_KEYS,
  ConfigError,
  checkConfigRules,
  configJsonSchema,
  effectiveStateDir,
  effectiveUrls,
  type LoadedConfig,
  loadConfig,
} from "./config/load.js";
export { type Config, type ConfigInput, ConfigSchema, DEFAULTS, NETWORK_URLS } from "./config/schema.js";
export { type Clock, ManualClock, systemClock } from "./core/clock.js";
export { DecimalError, parseDecimal, ratio } from "./core/decimal.js";
export { parseDuration } from "./core/duration.js";
export { ArgumentError } from "./core/errors/argument.js";
export { BaseError, ValidationError } from "./core/errors/base.js";
export { createEventBus, type DaemonEvent, type EventBus, type EventSubscriber } from "./core/events.js";
// the switch's features, handed to `createSwitch({ ..., features: { escalation: escalationMachine, drill: drillMachine } })`
export type { Features } from "./core/feature.js";
export {
  createRuntime,
  every,
  ManualTimers,
  type Repeating,
  type Runtime,
  systemTimers,
  type Timers,
} from "./core/runtime.js";
export { cronScheduler, ManualScheduler, type Scheduler } from "./core/scheduler.js";
export type {
  ChainWatchStatus,
  ExposureStatus,
  GuardStatus,
  Readiness,
  SwitchState,
  SwitchStatus,
} from "./core/status.js";
export { VERSION } from "./core/version.js";
export { drill as drillMachine } from "./drill/index.js";
export { escalation as escalationMachine } from "./escalation/index.js";
export {
  type BlockTag,
  EvmClient,
  type EvmClientOptions,
  isMethodNotFound,
  MAX_PAGE_SIZE,
} from "./protocol/evm/client.js";
export {
  EvmArgumentError,
  EvmError,
  type EvmErrorKind,
  EvmHttpError,
  EvmInconsistentBlockError,
  EvmMalformedResponseError,
  EvmNotFoundError,
  EvmRedirectError,
  EvmTransportError,
  JsonRpcError,
} from "./protocol/evm/errors.js";
export {
  type OtsBlockAllTransactions,
  type OtsBlockTransactions,
  OtsFullblock,
  OtsHeader,
  OtsReceipt,
  OtsTransaction,
} from "./protocol/evm/schemas.js";
export { TransportError, type TransportErrorKind } from "./protocol/http/errors.js";
export {
  classifyExchangeError,
  classifyHttpStatus,
  HyperliquidApiError,
  type HyperliquidEndpoint,
  type HyperliquidErrorKind,
  type NonceDetail,
  PERMANENT_KINDS,
} from "./protocol/hyperliquid/errors.js";
export {
  ExchangeClient,
  type ExchangeClientOptions,
  type ScheduleCancelParameters,
  type ScheduleCancelResult,
} from "./protocol/hyperliquid/exchange.js";
export {
  type BatchClearinghouseStatesParameters,
  type BatchClearinghouseStatesWithMeta,
  InfoClient,
  type InfoClientOptions,
  type OpenOrdersParameters,
} from "./protocol/hyperliquid/info.js";
export { NonceSource } from "./protocol/hyperliquid/nonce.js";
export * from "./protocol/hyperliquid/schemas.js";
export {
  AGENT_TYPES,
  EXCHANGE_DOMAIN,
  type L1Signature,
  type L1Signer,
  type LocalSigner,
  l1ActionDigest,
  l1ActionHash,
  localSigner,
  recoverL1ActionSigner,
  signL1Action,
} from "./protocol/hyperliquid/signing.js";
export {
  createHttpTransport,
  type HttpResponse,
  type HttpTransport,
  type HttpTransportOptions,
} from "./protocol/hyperliquid/transport.js";
export {
  ERROR_POLICY,
  type ErrorDomain,
  type ErrorPolicy,
  isPermanentError as isPermanent,
  shouldRetry as isRetryable,
  shouldRetry,
} from "./protocol/policy.js";
export { SimChain, type SimChainOptions } from "./sim/chain.js";
export {
  type DemoAccount,
  type FaultSpec,
  type Faults,
  type ReceivedAction,
  SIMULATOR_DEFAULTS,
  type SimOrder,
  type SimOrderInput,
  type SimPosition,
  type SimPositionInput,
  type SimState,
  type SimTrigger,
  SimulatorError,
  type SimulatorHandle,
  type SimulatorOptions,
  type SimulatorUser,
  startSimulator,
} from "./sim/server.js";
export {
  computeReadiness,
  createHealthServer,
  type HealthServer,
  parseListenAddress,
} from "./surface/health.js";
export { createMetrics, type Metrics } from "./surface/metrics.js";
// the watchers publish on a bus and word nothing: a bus with their log and metrics subscribers gives their lines
export { watcherSubscribers } from "./surface/watchers/index.js";
export { createSwitch, EXPEDITE_LEAD_MS, type Switch } from "./switch/index.js";
export { Ledger, LedgerEntry, LedgerFile, readLedgerFile, readLedgerState } from "./switch/ledger.js";
export { type BudgetMonitor, type BudgetStatus, createBudgetMonitor } from "./watchers/budget.js";
export { type ChainWatch, createChainWatch } from "./watchers/chain-watch.js";
export { createExposurePoller, type ExposurePoller, type ExposureThresholds } from "./watchers/exposure.js";
export {
  type AccountFigures,
  deriveFigures,
  derivePosition,
  type PositionFigures,
} from "./watchers/figures.js";
export { createGuard, type Guard } from "./watchers/guard.js";
