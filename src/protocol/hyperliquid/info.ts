/**
 * The /info client: `batchClearinghouseStates` (chunked, bounded concurrency, order-preserving) and
 * `openOrders`. Read-only, so requests are retried by the transport (`retryLimit`, default 1) on a
 * transport error, 429 or 5xx. Monetary values stay strings; no arithmetic happens here.
 */
import type { z } from "zod";
import { normalizeAddress } from "../../core/address.js";
import { type Clock, systemClock } from "../../core/clock.js";
import { ArgumentError } from "../../core/errors/argument.js";
import { formatIssues } from "../../core/errors/parse.js";
import { classifyHttpStatus, HyperliquidApiError } from "./errors.js";
import {
  MAX_LIST_ITEMS,
  MetaAndAssetCtxs,
  PerpMetaWithDecimals,
  type UserFill,
  UserFillsResponse,
} from "./order-schemas.js";
import {
  type ClearinghouseState,
  ClearinghouseState as ClearinghouseStateSchema,
  type ExtraAgent,
  ExtraAgentsResponse,
  type FrontendOpenOrder,
  FrontendOpenOrdersResponse,
  type HistoricalOrder,
  HistoricalOrdersResponse,
  type OpenOrder,
  OpenOrdersResponse,
  PerpDexs,
  PerpMeta,
  UserRateLimit,
  UserRole,
} from "./schemas.js";
import { parseSimulatorId, SIMULATOR_INFO_TYPE } from "./simulator-id.js";
import { CLIENT_DEFAULTS, createHttpTransport, type HttpResponse, type HttpTransport } from "./transport.js";

export type InfoClientOptions = {
  /** Base URL, e.g. `https://api.hyperliquid.xyz`; `/info` is appended. */
  apiUrl: string;
  /** For `sentAt` / `receivedAt`. Default: the system clock. */
  clock?: Clock;
  /** Per-request time-out (ms). Default: the requestTimeout option. */
  timeoutMs?: number;
  /** Users per batchClearinghouseStates request (the public API's maximum is not documented; clients use 25–50). Default: the exposureChunkSize option. */
  chunkSize?: number;
  /** Chunks in flight at once. Default: the exposureConcurrency option. */
  concurrency?: number;
  /** Extra attempts after a transport error, 429 or 5xx. Default 1. */
  retryLimit?: number;
  /** First back-off between retries (ms), doubled each time, capped at 2 s. Default 200. */
  retryDelayMs?: number;
  userAgent?: string;
  /** A transport to use instead of creating one. */
  transport?: HttpTransport;
};

export type BatchClearinghouseStatesParameters = {
  /** Account addresses (not agent addresses), any case; sent lower-case. */
  users: string[];
  /** Perp dex; omitted (the first perp dex) when undefined. */
  dex?: string | undefined;
  signal?: AbortSignal | undefined;
};

export type BatchClearinghouseStatesWithMeta = {
  /** In the order of `users`. */
  states: ClearinghouseState[];
  /** The newest Date header seen across chunks (ms, second precision). */
  serverDate: number | undefined;
  /** Local clock when the first chunk was sent. */
  sentAt: number;
  /** Local clock when the last chunk arrived. */
  receivedAt: number;
  /** Requests made (one per chunk). */
  chunks: number;
};

export type OpenOrdersParameters = {
  user: string;
  dex?: string | undefined;
  signal?: AbortSignal | undefined;
};

/** One open perp position as a close needs it (from `clearinghouseState`). */
export type OpenPosition = {
  coin: string;
  /** signed size, a decimal string: negative is short */
  szi: string;
  /** "cross" or "isolated" (another type the exchange may add is passed through) */
  marginType: string;
  leverage: number;
  entryPx: string | null;
  liquidationPx: string | null;
  positionValue: string;
};

export type PositionsSnapshot = {
  positions: OpenPosition[];
  /** the exchange's time of the snapshot (ms) */
  time: number;
};

function positiveInt(value: number, what: string): number {
  if (!Number.isSafeInteger(value) || value < 1) {
    throw new ArgumentError(`${what} must be a positive integer, got ${String(value)}`);
  }
  return value;
}

/** Links an optional outer signal to an inner controller, so one failed chunk can stop the others. */
function linkedController(outer: AbortSignal | undefined): {
  controller: AbortController;
  unlink: () => void;
} {
  const controller = new AbortController();
  if (!outer) return { controller, unlink: () => {} };
  const onAbort = () => controller.abort(outer.reason);
  if (outer.aborted) onAbort();
  else outer.addEventListener("abort", onAbort, { once: true });
  return { controller, unlink: () => outer.removeEventListener("abort", onAbort) };
}

export class InfoClient {
  readonly #transport: HttpTransport;
  readonly #clock: Clock;
  readonly #chunkSize: number;
  readonly #concurrency: number;
  readonly #url: string;

  constructor({
    apiUrl,
    clock = systemClock,
    timeoutMs = CLIENT_DEFAULTS.requestTimeoutMs,
    chunkSize = CLIENT_DEFAULTS.chunkSize,
    concurrency = CLIENT_DEFAULTS.concurrency,
    retryLimit = 1,
    retryDelayMs = 200,
    userAgent,
    transport,
  }: InfoClientOptions) {
    this.#clock = clock;
    this.#chunkSize = positiveInt(chunkSize, "chunkSize");
    this.#concurrency = positiveInt(concurrency, "concurrency");
    this.#transport =
      transport ??
      createHttpTransport({
        baseUrl: apiUrl,
        timeoutMs,
        retryLimit,
        retryDelayMs,
        ...(userAgent ? { userAgent } : {}),
      });
    this.#url = `${apiUrl.replace(/\/+$/, "")}/info`;
  }

  /** States in the order of `users`. */
  async batchClearinghouseStates(params: BatchClearinghouseStatesParameters): Promise<ClearinghouseState[]> {
    return (await this.batchClearinghouseStatesWithMeta(params)).states;
  }

  /** States plus timing: the newest server Date header and the local send/receive times. */
  async batchClearinghouseStatesWithMeta({
    users,
    dex,
    signal,
  }: BatchClearinghouseStatesParameters): Promise<BatchClearinghouseStatesWithMeta> {
    // Validate everything before sending anything.
    const normalized = users.map((user, i) => normalizeAddress(user, `users[${i}]`));
    const chunks: string[][] = [];
    for (let i = 0; i < normalized.length; i += this.#chunkSize) {
      chunks.push(normalized.slice(i, i + this.#chunkSize));
    }
    const sentAt = this.#clock.now();
    if (chunks.length === 0)
      return { states: [], serverDate: undefined, sentAt, receivedAt: sentAt, chunks: 0 };

    const results: ClearinghouseState[][] = new Array(chunks.length);
    let serverDate: number | undefined;
    let next = 0;
    let failure: unknown;
    const { controller, unlink } = linkedController(signal);

    const worker = async () => {
      while (failure === undefined && next < chunks.length) {
        const index = next++;
        const chunk = chunks[index]!;
        try {
          const response = await this.#transport.postJson(
            "/info",
            { type: "batchClearinghouseStates", users: chunk, ...(dex !== undefined ? { dex } : {}) },
            { signal: controller.signal },
          );
          this.#checkStatus(response);
          if (!Array.isArray(response.json)) {
            throw this.#malformed(response, "expected a JSON array of clearinghouse states");
          }
          if (response.json.length !== chunk.length) {
            throw this.#malformed(
              response,
              `asked for ${chunk.length} users, got ${response.json.length} states (the position is the only link to the user)`,
            );
          }
          results[index] = response.json.map((item, k) =>
            this.#parseItem(ClearinghouseStateSchema, item, response, `state of ${chunk[k]}`),
          );
          if (
            response.date !== undefined &&
            Number.isFinite(response.date) &&
            (serverDate === undefined || response.date > serverDate)
          ) {
            serverDate = response.date;
          }
        } catch (error) {
          if (failure === undefined) {
            failure = error;
            controller.abort(error);
          }
        }
      }
    };

    try {
      await Promise.all(Array.from({ length: Math.min(this.#concurrency, chunks.length) }, worker));
    } finally {
      unlink();
    }
    if (failure !== undefined) throw failure;
    return {
      states: results.flat(),
      serverDate,
      sentAt,
      receivedAt: this.#clock.now(),
      chunks: chunks.length,
    };
  }

  /** The user's resting orders (spot orders come with the first perp dex only, docs/exchange-behaviour.md §15). */
  async openOrders({ user, dex, signal }: OpenOrdersParameters): Promise<OpenOrder[]> {
    const address = normalizeAddress(user, "user");
    const response = await this.#transport.postJson(
      "/info",
      { type: "openOrders", user: address, ...(dex !== undefined ? { dex } : {}) },
      { signal },
    );
    this.#checkStatus(response);
    if (response.json === undefined) throw this.#malformed(response, "the body is not JSON");
    return this.#parseItem(OpenOrdersResponse, response.json, response, "open orders");
  }

  /** The address's lifetime action budget (`userRateLimit`); query the account, not an agent address. */
  async userRateLimit({
    user,
    signal,
  }: {
    user: string;
    signal?: AbortSignal | undefined;
  }): Promise<UserRateLimit> {
    const address = normalizeAddress(user, "user");
    const response = await this.#transport.postJson(
      "/info",
      { type: "userRateLimit", user: address },
      { signal },
    );
    this.#checkStatus(response);
    return this.#parseItem(UserRateLimit, response.json, response, "userRateLimit");
  }

  /** Open orders with their kind (`isTrigger`, `reduceOnly`, `orderType`); the cancel executor reads these. */
  async frontendOpenOrders({ user, dex, signal }: OpenOrdersParameters): Promise<FrontendOpenOrder[]> {
    const address = normalizeAddress(user, "user");
    return this.#query(
      { type: "frontendOpenOrders", user: address, ...(dex !== undefined ? { dex } : {}) },
      FrontendOpenOrdersResponse,
      "frontendOpenOrders",
      signal,
    );
  }

  /**
   * The user's latest orders with their final status (`historicalOrders`). Orders removed by a fired
   * scheduled cancel have status `scheduledCancel` (docs/exchange-record.md).
   */
  async historicalOrders({
    user,
    signal,
  }: {
    user: string;
    signal?: AbortSignal | undefined;
  }): Promise<HistoricalOrder[]> {
    const address = normalizeAddress(user, "user");
    return this.#query(
      { type: "historicalOrders", user: address },
      HistoricalOrdersResponse,
      "historicalOrders",
      signal,
    );
  }

  /** The master's named API wallets with `validUntil` (`extraAgents`); ask with the master's address. */
  async extraAgents({
    user,
    signal,
  }: {
    user: string;
    signal?: AbortSignal | undefined;
  }): Promise<ExtraAgent[]> {
    const address = normalizeAddress(user, "user");
    return this.#query({ type: "extraAgents", user: address }, ExtraAgentsResponse, "extraAgents", signal);
  }

  /** The address's role (`agent` with its master, `user`, `vault`, `missing`…); costs 60 IP weight. */
  async userRole({ user, signal }: { user: string; signal?: AbortSignal | undefined }): Promise<UserRole> {
    const address = normalizeAddress(user, "user");
    return this.#query({ type: "userRole", user: address }, UserRole, "userRole", signal);
  }

  /**
   * A perp dex's universe (`dex` omitted or "": the first perp dex); an asset's index is its position in
   * `universe` (on a builder-deployed dex, 100000 + the dex's index in `perpDexs` × 10000 on top: asset-ids.ts).
   */
  async meta({
    signal,
    dex,
  }: {
    signal?: AbortSignal | undefined;
    dex?: string | undefined;
  } = {}): Promise<PerpMeta> {
    return this.#query(
      { type: "meta", ...(dex ? { dex } : {}) },
      PerpMeta,
      dex ? `meta of dex ${dex}` : "meta",
      signal,
    );
  }

  /** The perp dexes in index order: null (the first perp dex), then each builder-deployed dex (`perpDexs`). */
  async perpDexs({ signal }: { signal?: AbortSignal | undefined } = {}): Promise<PerpDexs> {
    return this.#query({ type: "perpDexs" }, PerpDexs, "perpDexs", signal);
  }

  /** `meta` with each asset's `szDecimals` (what order prices and sizes are checked against); bounded. */
  async perpMeta({ signal }: { signal?: AbortSignal | undefined } = {}): Promise<PerpMetaWithDecimals> {
    return this.#query({ type: "meta" }, PerpMetaWithDecimals, "meta", signal);
  }

  /**
   * `meta` and each asset's mark price in one read (`metaAndAssetCtxs`): what a close is planned from. A coin
   * whose mark is missing is left out of `marks` (a close then blocks it rather than guess).
   */
  async metaAndMarks({
    signal,
    dex,
  }: {
    signal?: AbortSignal | undefined;
    dex?: string | undefined;
  } = {}): Promise<{
    meta: PerpMetaWithDecimals;
    marks: Record<string, string>;
  }> {
    const [meta, ctxs] = await this.#query(
      { type: "metaAndAssetCtxs", ...(dex ? { dex } : {}) },
      MetaAndAssetCtxs,
      dex ? `metaAndAssetCtxs of dex ${dex}` : "metaAndAssetCtxs",
      signal,
    );
    const marks: Record<string, string> = {};
    meta.universe.forEach((asset, i) => {
      const px = ctxs[i]?.markPx;
      if (px !== null && px !== undefined && !/^-|^0+(\.0+)?$/.test(px)) marks[asset.name] = px;
    });
    return { meta, marks };
  }

  /** The user's most recent fills (`userFills`, at most 2,000), newest first as the exchange sends them. */
  async userFills({ user, signal }: { user: string; signal?: AbortSignal | undefined }): Promise<UserFill[]> {
    const address = normalizeAddress(user, "user");
    return this.#query({ type: "userFills", user: address }, UserFillsResponse, "userFills", signal);
  }

  /**
   * The user's open perp positions (`clearinghouseState`), each with its margin type and leverage, and the
   * snapshot's time. Zero-size entries are left out; more than 10,000 positions is refused as malformed.
   */
  async positions({ user, dex, signal }: OpenOrdersParameters): Promise<PositionsSnapshot> {
    const address = normalizeAddress(user, "user");
    const response = await this.#transport.postJson(
      "/info",
      { type: "clearinghouseState", user: address, ...(dex !== undefined ? { dex } : {}) },
      { signal },
    );
    this.#checkStatus(response);
    const raw = response.json as { assetPositions?: unknown } | null;
    if (raw && Array.isArray(raw.assetPositions) && raw.assetPositions.length > MAX_LIST_ITEMS)
      throw this.#malformed(response, `more than ${MAX_LIST_ITEMS} positions`);
    const state = this.#parseItem(ClearinghouseStateSchema, response.json, response, "clearinghouseState");
    const positions = state.assetPositions
      .map(({ position: p }) => ({
        coin: p.coin,
        szi: p.szi,
        marginType: p.leverage.type,
        leverage: p.leverage.value,
        entryPx: p.entryPx,
        liquidationPx: p.liquidationPx,
        positionValue: p.positionValue,
      }))
      .filter((p) => !/^-?0+(\.0+)?$/.test(p.szi));
    return { positions, time: state.time };
  }

  /**
   * Cumulative traded volume in USD (`userRateLimit.cumVlm`), as a number: for the volume gate on removal
   * (below $1M a removal is refused, and nothing could have been armed; docs/exchange-record.md).
   */
  async cumulativeVolume(user: string, signal?: AbortSignal): Promise<number> {
    const limit = await this.userRateLimit({ user, signal });
    return Number(limit.cumVlm);
  }

  /**
   * Whether the host is hl-deadman's simulator: it alone answers `{"type":"hlDeadmanSimulator"}` (with its seed);
   * the exchange refuses the type (422). Null for any other answer, or none.
   */
  async simulatorId({ signal }: { signal?: AbortSignal | undefined } = {}): Promise<{ seed: number } | null> {
    try {
      const response = await this.#transport.postJson("/info", { type: SIMULATOR_INFO_TYPE }, { signal });
      return response.status === 200 ? parseSimulatorId(response.json) : null;
    } catch {
      return null;
    }
  }

  async #query<T extends z.ZodType>(
    body: Record<string, unknown>,
    schema: T,
    what: string,
    signal: AbortSignal | undefined,
  ): Promise<z.output<T>> {
    const response = await this.#transport.postJson("/info", body, { signal });
    this.#checkStatus(response);
    return this.#parseItem(schema, response.json, response, what);
  }

  /** Ends the keep-alive sockets. Idempotent. */
  close(): void {
    this.#transport.close();
  }

  #checkStatus(response: HttpResponse): void {
    const kind = classifyHttpStatus(response.status);
    if (kind !== undefined) {
      throw new HyperliquidApiError({
        kind,
        endpoint: "info",
        status: response.status,
        serverMessage: response.bodyText,
        url: this.#url,
      });
    }
    if (response.json === undefined) throw this.#malformed(response, "the body is not JSON");
  }

  #malformed(response: HttpResponse, reason: string): HyperliquidApiError {
    return new HyperliquidApiError({
      kind: "malformed_response",
      endpoint: "info",
      status: response.status,
      url: this.#url,
      reason,
    });
  }

  #parseItem<T extends z.ZodType>(
    schema: T,
    value: unknown,
    response: HttpResponse,
    what: string,
  ): z.output<T> {
    const result = schema.safeParse(value);
    if (result.success) return result.data;
    throw this.#malformed(response, `invalid ${what}: ${formatIssues(result.error).slice(0, 5).join("; ")}`);
  }
}
