/** The library surface of hl-deadman (package.json "exports" ".") — snapshotted by test/index.test.ts. */

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
export { type BudgetMonitor, type BudgetStatus, createBudgetMonitor } from "./daemon/budget.js";
export { type ChainWatch, createChainWatch } from "./daemon/chain-watch.js";
export { type Daemon, planAccounts, type StartDaemonParameters, startDaemon } from "./daemon/daemon.js";
export { createExposurePoller, type ExposurePoller, type ExposureThresholds } from "./daemon/exposure.js";
export {
  type AccountFigures,
  deriveFigures,
  derivePosition,
  type PositionFigures,
} from "./daemon/figures.js";
export { createGuard, type Guard } from "./daemon/guard.js";
export {
  computeReadiness,
  createHealthServer,
  type HealthServer,
  parseListenAddress,
} from "./daemon/health.js";
export { Ledger, LedgerEntry, LedgerFile, readLedgerFile } from "./daemon/ledger.js";
export { createLoop, ManualTimers, systemTimers, type Timers } from "./daemon/loop.js";
export { createMetrics, type Metrics } from "./daemon/metrics.js";
export { installShutdownHandlers } from "./daemon/shutdown.js";
export { createSwitch, EXPEDITE_LEAD_MS, type Switch } from "./daemon/switch.js";
export type {
  ChainWatchStatus,
  ExposureStatus,
  GuardStatus,
  Readiness,
  SwitchState,
  SwitchStatus,
} from "./daemon/types.js";
export { ArgumentError } from "./errors/argument.js";
export { BaseError, ValidationError } from "./errors/base.js";
export {
  ERROR_POLICY,
  type ErrorDomain,
  type ErrorPolicy,
  shouldRetry,
} from "./errors/policy.js";
export {
  type BlockTag,
  EvmClient,
  type EvmClientOptions,
  isMethodNotFound,
  MAX_PAGE_SIZE,
} from "./evm/client.js";
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
} from "./evm/errors.js";
export {
  type OtsBlockAllTransactions,
  type OtsBlockTransactions,
  OtsFullblock,
  OtsHeader,
  OtsReceipt,
  OtsTransaction,
} from "./evm/schemas.js";
export {
  classifyExchangeError,
  classifyHttpStatus,
  HyperliquidApiError,
  type HyperliquidEndpoint,
  type HyperliquidErrorKind,
  isPermanent,
  isRetryable,
  type NonceDetail,
  PERMANENT_KINDS,
} from "./hyperliquid/errors.js";
export {
  ExchangeClient,
  type ExchangeClientOptions,
  type ScheduleCancelParameters,
  type ScheduleCancelResult,
} from "./hyperliquid/exchange.js";
export {
  type BatchClearinghouseStatesParameters,
  type BatchClearinghouseStatesWithMeta,
  InfoClient,
  type InfoClientOptions,
  type OpenOrdersParameters,
} from "./hyperliquid/info.js";
export { NonceSource } from "./hyperliquid/nonce.js";
export * from "./hyperliquid/schemas.js";
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
} from "./hyperliquid/signing.js";
export {
  createHttpTransport,
  type HttpResponse,
  type HttpTransport,
  type HttpTransportOptions,
} from "./hyperliquid/transport.js";
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
export { TransportError, type TransportErrorKind } from "./transport/errors.js";
export { type Clock, ManualClock, systemClock } from "./utils/clock.js";
export { DecimalError, parseDecimal, ratio } from "./utils/decimal.js";
export { parseDuration } from "./utils/duration.js";
export { cronScheduler, ManualScheduler, type Scheduler } from "./utils/scheduler.js";
export { VERSION } from "./version.js";
