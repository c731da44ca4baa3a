/**
 * The /exchange client: signs and sends `scheduleCancel`, and turns every answer into a result or a
 * HyperliquidApiError. No automatic retry: a signed action is never re-sent blindly, and the caller (the switch)
 * decides, with `isRetryable`, whether to send a new one with a fresh nonce.
 */
import { SigningKey } from "ethers/crypto";
import { normalizeAddress } from "../../core/address.js";
import type { Clock } from "../../core/clock.js";
import { ValidationError } from "../../core/errors/base.js";
import { formatIssues } from "../../core/errors/parse.js";
import { redactUrl } from "../../core/redact.js";
import {
  classifyExchangeError,
  classifyHttpStatus,
  HyperliquidApiError,
  signerMismatchHint,
} from "./errors.js";
import { NonceSource } from "./nonce.js";
import { type OrderRequest, orderAction } from "./order.js";
import { OrderOkResponse } from "./order-schemas.js";
import {
  type CancelAction,
  CancelOkResponse,
  ExchangeResponse,
  type ScheduleCancelAction,
} from "./schemas.js";
import { addressOfKey, type L1Signer, signL1Action } from "./signing.js";
import { CLIENT_DEFAULTS, createHttpTransport, type HttpTransport } from "./transport.js";

export type ExchangeClientOptions = {
  /** Base URL, e.g. `https://api.hyperliquid.xyz`; `/exchange` is appended. */
  apiUrl: string;
  /** An ethers Wallet (or SigningKey / EIP-712 signer with an `address`). */
  signer: L1Signer & { address?: string };
  /** Signing source: "a" on mainnet, "b" on testnet. */
  isMainnet: boolean;
  clock: Clock;
  /** Default: a new NonceSource(clock). Share one per signer across everything that signs with it. */
  nonces?: NonceSource;
  /** Per-request validity window: expiresAfter = now + window, computed per request; null omits it. Default: the requestTimeout option. */
  expiresAfterMs?: number | null;
  /** Request time-out (ms). Default: the requestTimeout option. */
  timeoutMs?: number;
  userAgent?: string;
  /** A transport to use instead of creating one (tests, shared agents). */
  transport?: HttpTransport;
};

export type ScheduleCancelParameters = {
  /** Cancel time (ms since epoch), ≥ the exchange's now + 5 s. Omit to remove the schedule. */
  time?: number | undefined;
  /** Act for this vault or subaccount. */
  vaultAddress?: string | undefined;
  /** Overrides the client's window for this request; null omits expiresAfter. */
  expiresAfterMs?: number | null | undefined;
  signal?: AbortSignal | undefined;
};

export type CancelParameters = {
  /**
   * The fast flag: sent as `"f": true` after `cancels`, left out when false. The exchange refuses a fast cancel
   * of a trigger order; the next network upgrade prioritises only fast cancels in the mempool (docs/exchange-record.md, "The cancel mode").
   */
  fast?: boolean | undefined;
  vaultAddress?: string | undefined;
  expiresAfterMs?: number | null | undefined;
  signal?: AbortSignal | undefined;
};

export type OrderParameters = {
  vaultAddress?: string | undefined;
  expiresAfterMs?: number | null | undefined;
  signal?: AbortSignal | undefined;
};

/** One order's outcome, in the order asked: resting (with its oid), filled (size and average price) or refused. */
export type PlacedOrderStatus =
  | { kind: "resting"; oid: number }
  | { kind: "filled"; oid: number; totalSz: string; avgPx: string }
  | { kind: "error"; error: string };

export type OrderResult = { nonce: number; statuses: PlacedOrderStatus[]; latencyMs: number };

export type CancelOrderStatus = { asset: number; oid: number; ok: boolean; error?: string };

export type CancelResult = {
  nonce: number;
  /** one per order, in the order asked */
  statuses: CancelOrderStatus[];
  latencyMs: number;
};

export type ScheduleCancelResult = {
  nonce: number;
  /** the expiresAfter that was signed, if any */
  expiresAfter: number | undefined;
  /** the time that was set; undefined when the schedule was removed */
  time: number | undefined;
  /** `default` (what the exchange answers) or `scheduleCancel` (what some docs show) */
  responseType: string;
  /** round trip of the HTTP request (ms, monotonic) */
  latencyMs: number;
  /** the response's Date header (ms, second precision), for clock-skew estimates */
  serverDate: number | undefined;
};

const answerDates = new WeakMap<object, number>();

/** The Date header of the answer an error came from (ms, 1 s resolution), when there was one. */
/** Attaches an answer's Date to the error it became (what answerDateOf reads; a fake exchange's refusals too). */
export function withAnswerDate<E>(error: E, date: number | undefined): E {
  if (date !== undefined && typeof error === "object" && error !== null) answerDates.set(error, date);
  return error;
}

export function answerDateOf(error: unknown): number | undefined {
  return typeof error === "object" && error !== null ? answerDates.get(error) : undefined;
}

/** Success types we accept; anything else is not proof that the schedule was set (docs/exchange-behaviour.md §5.1). */
const OK_TYPES = new Set(["default", "scheduleCancel"]);

/**
 * The first `error` string anywhere in an answer body (e.g. `response.data.statuses[i].error`), or null. A
 * `{"status":"ok"}` envelope can still carry a per-item error; such an answer is not a confirmation.
 */
export function findErrorInAnswer(value: unknown, depth = 0): string | null {
  if (depth > 8 || value === null || typeof value !== "object") return null;
  if (Array.isArray(value)) {
    for (const item of value) {
      const found = findErrorInAnswer(item, depth + 1);
      if (found !== null) return found;
    }
    return null;
  }
  for (const [key, item] of Object.entries(value)) {
    if (key === "error" && item !== null && item !== undefined && item !== false)
      return typeof item === "string" ? item : JSON.stringify(item);
    const found = findErrorInAnswer(item, depth + 1);
    if (found !== null) return found;
  }
  return null;
}

function checkWindow(value: number | null, what: string): number | null {
  if (value === null) return null;
  if (!Number.isSafeInteger(value) || value < 0) {
    throw new ValidationError(what, [
      `must be a non-negative integer number of ms or null, got ${String(value)}`,
    ]);
  }
  return value;
}

function signerAddressOf(signer: L1Signer & { address?: string }): string {
  if (typeof signer.address === "string") return normalizeAddress(signer.address, "signer.address");
  if (signer instanceof SigningKey) return addressOfKey(signer).toLowerCase();
  if ("signingKey" in signer && signer.signingKey instanceof SigningKey) {
    return addressOfKey(signer.signingKey).toLowerCase();
  }
  throw new ValidationError("signer", ["an EIP-712 signer needs an `address` property"]);
}

export class ExchangeClient {
  /** Lower-case address of the signer (the agent's, when an API wallet signs). */
  readonly signerAddress: string;
  readonly #signer: L1Signer;
  readonly #isMainnet: boolean;
  readonly #clock: Clock;
  readonly #nonces: NonceSource;
  readonly #expiresAfterMs: number | null;
  readonly #transport: HttpTransport;
  readonly #url: string;

  constructor({
    apiUrl,
    signer,
    isMainnet,
    clock,
    nonces,
    expiresAfterMs = CLIENT_DEFAULTS.requestTimeoutMs,
    timeoutMs = CLIENT_DEFAULTS.requestTimeoutMs,
    userAgent,
    transport,
  }: ExchangeClientOptions) {
    this.signerAddress = signerAddressOf(signer);
    this.#signer = signer;
    this.#isMainnet = isMainnet;
    this.#clock = clock;
    this.#nonces = nonces ?? new NonceSource(clock);
    this.#expiresAfterMs = checkWindow(expiresAfterMs, "expiresAfterMs");
    // retryLimit 0: never re-send a signed action (the transport also refuses to for /exchange).
    this.#transport =
      transport ??
      createHttpTransport({
        baseUrl: apiUrl,
        timeoutMs,
        retryLimit: 0,
        ...(userAgent ? { userAgent } : {}),
      });
    this.#url = `${apiUrl.replace(/\/+$/, "")}/exchange`;
  }

  /** Sets (with `time`) or removes (without) the account's scheduled cancel. */
  async scheduleCancel({
    time,
    vaultAddress,
    expiresAfterMs,
    signal,
  }: ScheduleCancelParameters = {}): Promise<ScheduleCancelResult> {
    if (time !== undefined && (!Number.isSafeInteger(time) || time < 0)) {
      throw new ValidationError("scheduleCancel time", [
        `must be a non-negative integer number of ms since the epoch, got ${String(time)}`,
      ]);
    }
    const vault = vaultAddress === undefined ? undefined : normalizeAddress(vaultAddress, "vaultAddress");
    const window =
      expiresAfterMs === undefined ? this.#expiresAfterMs : checkWindow(expiresAfterMs, "expiresAfterMs");

    // Key order matters to the hash (msgpack): type, then time; `time` omitted, never null, on removal.
    const action: ScheduleCancelAction =
      time === undefined ? { type: "scheduleCancel" } : { type: "scheduleCancel", time };
    const { nonce, expiresAfter, answer, response, base } = await this.#send(action, vault, window, signal);
    if (!OK_TYPES.has(answer.type)) throw this.#unexpectedType(base, response, answer.type);
    // An error anywhere in the body is not a confirmation, whatever the envelope says.
    const inner = findErrorInAnswer(response.json);
    if (inner !== null) {
      const { kind, nonceDetail } = classifyExchangeError(inner);
      throw this.#dated(
        new HyperliquidApiError({
          ...base,
          kind,
          nonceDetail,
          serverMessage: inner,
          hint: this.#hint(inner),
        }),
        response.date,
      );
    }
    return {
      nonce,
      expiresAfter,
      time,
      responseType: answer.type,
      latencyMs: response.elapsedMs,
      serverDate: response.date,
    };
  }

  /**
   * One signed `noop` (`{"type":"noop"}`): it changes nothing but the signer's nonce set and one unit of the address
   * budget (Hyperliquid docs, exchange endpoint, "Invalidate pending nonce (noop)"), and proves that the exchange
   * recovers our signer from the signature: a key, its network (the chain id signed over) and its registration. A
   * refusal throws like any other (a stranger recovered carries `hint`, signerMismatchHint).
   */
  async noop({ signal }: { signal?: AbortSignal | undefined } = {}): Promise<{
    nonce: number;
    latencyMs: number;
    serverDate: number | undefined;
  }> {
    const { nonce, answer, response, base } = await this.#send(
      { type: "noop" },
      undefined,
      this.#expiresAfterMs,
      signal,
    );
    if (answer.type !== "default") throw this.#unexpectedType(base, response, answer.type);
    return { nonce, latencyMs: response.elapsedMs, serverDate: response.date };
  }

  /** An `ok` answer of a type the action does not answer with: malformed, dated by the answer's Date. */
  #unexpectedType(
    base: { endpoint: "exchange"; status: number; url: string },
    response: { bodyText: string; date: number | undefined },
    type: unknown,
  ): HyperliquidApiError {
    return this.#dated(
      new HyperliquidApiError({
        ...base,
        kind: "malformed_response",
        serverMessage: response.bodyText,
        reason: `unexpected response type ${JSON.stringify(type)}`,
      }),
      response.date,
    );
  }

  /**
   * Cancels resting orders by asset index and oid (`{"type":"cancel","cancels":[{"a","o"}]}`, key order as
   * the official SDKs sign it). A top-level refusal throws; otherwise one status per order, in order:
   * `"success"` or `{ error }` (e.g. "Order was never placed, already canceled, or filled. asset=1").
   */
  async cancel(
    orders: ReadonlyArray<{ asset: number; oid: number }>,
    { fast, vaultAddress, expiresAfterMs, signal }: CancelParameters = {},
  ): Promise<CancelResult> {
    if (orders.length === 0) throw new ValidationError("cancel orders", ["at least one order is needed"]);
    for (const [i, o] of orders.entries()) {
      if (!Number.isSafeInteger(o.asset) || o.asset < 0 || !Number.isSafeInteger(o.oid) || o.oid < 0) {
        throw new ValidationError(`cancel orders[${i}]`, [
          `asset and oid must be non-negative integers, got ${JSON.stringify(o)}`,
        ]);
      }
    }
    const vault = vaultAddress === undefined ? undefined : normalizeAddress(vaultAddress, "vaultAddress");
    const window =
      expiresAfterMs === undefined ? this.#expiresAfterMs : checkWindow(expiresAfterMs, "expiresAfterMs");
    const action: CancelAction = cancelAction(orders, fast === true);
    const { nonce, answer, response, base } = await this.#send(action, vault, window, signal);
    const parsed = CancelOkResponse.safeParse(answer);
    if (!parsed.success || parsed.data.data.statuses.length !== orders.length) {
      throw new HyperliquidApiError({
        ...base,
        kind: "malformed_response",
        serverMessage: response.bodyText,
        reason: parsed.success
          ? `asked to cancel ${orders.length} orders, got ${parsed.data.data.statuses.length} statuses`
          : `unexpected cancel response (${formatIssues(parsed.error).join("; ")})`,
      });
    }
    return {
      nonce,
      statuses: parsed.data.data.statuses.map((st, i) => ({
        asset: orders[i]!.asset,
        oid: orders[i]!.oid,
        ok: st === "success",
        ...(st === "success" ? {} : { error: st.error }),
      })),
      latencyMs: response.elapsedMs,
    };
  }

  /**
   * Places orders (`{"type":"order","orders":[…],"grouping":"na"}`, built and checked by order.ts's
   * `orderAction`). A top-level refusal throws HyperliquidApiError; otherwise one status per order, in order: a
   * per-order refusal (e.g. "Reduce only order would increase position. asset=0", "Only post-only orders allowed
   * immediately after a network upgrade") is a status, never turned into anything else. Not retried: the caller
   * re-reads positions before sending another (a reduce-only order sent twice still cannot flip a position).
   */
  async order(
    orders: ReadonlyArray<OrderRequest>,
    { vaultAddress, expiresAfterMs, signal }: OrderParameters = {},
  ): Promise<OrderResult> {
    const action = orderAction(orders);
    const vault = vaultAddress === undefined ? undefined : normalizeAddress(vaultAddress, "vaultAddress");
    const window =
      expiresAfterMs === undefined ? this.#expiresAfterMs : checkWindow(expiresAfterMs, "expiresAfterMs");
    const { nonce, answer, response, base } = await this.#send(action, vault, window, signal);
    const parsed = OrderOkResponse.safeParse(answer);
    if (!parsed.success || parsed.data.data.statuses.length !== orders.length) {
      throw this.#dated(
        new HyperliquidApiError({
          ...base,
          kind: "malformed_response",
          serverMessage: response.bodyText,
          reason: parsed.success
            ? `placed ${orders.length} orders, got ${parsed.data.data.statuses.length} statuses`
            : `unexpected order response (${formatIssues(parsed.error).slice(0, 5).join("; ")})`,
        }),
        response.date,
      );
    }
    const statuses = parsed.data.data.statuses.map((st): PlacedOrderStatus => {
      if ("error" in st && typeof st.error === "string") return { kind: "error", error: st.error };
      if ("filled" in st && st.filled !== undefined) {
        const f = st.filled as { oid: number; totalSz: string; avgPx: string };
        return { kind: "filled", oid: f.oid, totalSz: f.totalSz, avgPx: f.avgPx };
      }
      return { kind: "resting", oid: (st as { resting: { oid: number } }).resting.oid };
    });
    return { nonce, statuses, latencyMs: response.elapsedMs };
  }

  /** Signs and sends one L1 action; returns the `response` object of a `status:"ok"` answer, throws otherwise. */
  async #send(
    action: Record<string, unknown>,
    vault: string | undefined,
    window: number | null,
    signal: AbortSignal | undefined,
  ) {
    const nonce = this.#nonces.next();
    const expiresAfter = window === null ? undefined : Math.floor(this.#clock.now()) + window;
    const signature = await signL1Action({
      wallet: this.#signer,
      action,
      nonce,
      vaultAddress: vault ?? null,
      expiresAfter: expiresAfter ?? null,
      isMainnet: this.#isMainnet,
    });
    const body = {
      action,
      nonce,
      signature,
      ...(vault !== undefined ? { vaultAddress: vault } : {}),
      ...(expiresAfter !== undefined ? { expiresAfter } : {}),
    };
    const response = await this.#transport.postJson("/exchange", body, { signal });
    try {
      return this.#envelope(response, nonce, expiresAfter);
    } catch (error) {
      throw this.#dated(error, response.date);
    }
  }

  /** A refusal that names another signer than ours: the network or signature hint (signerMismatchHint). */
  #hint(text: string): string | undefined {
    return signerMismatchHint(text, this.signerAddress, this.#isMainnet);
  }

  /** Every answer carries the exchange's Date: the caller's clock keeping uses refusals' too. */
  #dated<E>(error: E, date: number | undefined): E {
    return withAnswerDate(error, date);
  }

  #envelope(
    response: Awaited<ReturnType<HttpTransport["postJson"]>>,
    nonce: number,
    expiresAfter: number | undefined,
  ) {
    const base = { endpoint: "exchange" as const, status: response.status, url: this.#url };
    const statusKind = classifyHttpStatus(response.status);
    if (statusKind !== undefined) {
      // A 404 is almost always a wrong API URL: say which URL was asked and how it is made.
      const hint =
        response.status === 404
          ? `no such endpoint: ${redactUrl(this.#url)} (the API URL with /exchange appended); --api-url takes the API's base URL`
          : undefined;
      throw new HyperliquidApiError({ ...base, kind: statusKind, serverMessage: response.bodyText, hint });
    }
    if (response.json === undefined) {
      throw new HyperliquidApiError({
        ...base,
        kind: "malformed_response",
        serverMessage: response.bodyText,
        reason: "the body is not JSON",
      });
    }
    const envelope = ExchangeResponse.safeParse(response.json);
    if (!envelope.success) {
      throw new HyperliquidApiError({
        ...base,
        kind: "malformed_response",
        serverMessage: response.bodyText,
        reason: `unexpected response shape (${formatIssues(envelope.error).join("; ")})`,
      });
    }
    const envelopeData = envelope.data;
    if (envelopeData.status === "err") {
      const { kind, nonceDetail } = classifyExchangeError(envelopeData.response);
      throw new HyperliquidApiError({
        ...base,
        kind,
        nonceDetail,
        serverMessage: envelopeData.response,
        hint: this.#hint(envelopeData.response),
      });
    }
    return { nonce, expiresAfter, answer: envelopeData.response, response, base };
  }

  /** Ends the keep-alive sockets. Idempotent. */
  close(): void {
    this.#transport.close();
  }
}

/**
 * The cancel action exactly as it is signed and sent: `{"type","cancels":[{"a","o"}]}` plus `"f": true` after
 * `cancels` for a fast cancel. `f` is never written as false: the exchange refuses an action hashed with it.
 */
export function cancelAction(
  orders: ReadonlyArray<{ asset: number; oid: number }>,
  fast: boolean,
): CancelAction {
  const cancels = orders.map((o) => ({ a: o.asset, o: o.oid }));
  return fast ? { type: "cancel", cancels, f: true } : { type: "cancel", cancels };
}
