/**
 * The /exchange client: signs and sends `scheduleCancel`, and turns every answer into a result or a
 * HyperliquidApiError. No automatic retry: a signed action is never re-sent blindly, and the caller (the switch)
 * decides, with `isRetryable`, whether to send a new one with a fresh nonce.
 */
import { SigningKey } from "ethers/crypto";
import { computeAddress } from "ethers/transaction";
import { ValidationError } from "../errors/base.js";
import { formatIssues } from "../errors/parse.js";
import { normalizeAddress } from "../utils/address.js";
import type { Clock } from "../utils/clock.js";
import { classifyExchangeError, classifyHttpStatus, HyperliquidApiError } from "./errors.js";
import { NonceSource } from "./nonce.js";
import { ExchangeResponse, type ScheduleCancelAction, type ScheduleCancelRequest } from "./schemas.js";
import { type L1Signer, signL1Action } from "./signing.js";
import { createHttpTransport, type HttpTransport } from "./transport.js";

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
  /** Per-request validity window: expiresAfter = now + window, computed per request; null omits it. Default 5000. */
  expiresAfterMs?: number | null;
  /** Request time-out (ms). Default 5000. */
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
export function answerDateOf(error: unknown): number | undefined {
  return typeof error === "object" && error !== null ? answerDates.get(error) : undefined;
}

/** Success types we accept; anything else is not proof that the schedule was set (docs/exchange-behaviour.md). */
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
  if (signer instanceof SigningKey) return computeAddress(signer.publicKey).toLowerCase();
  if ("signingKey" in signer && signer.signingKey instanceof SigningKey) {
    return computeAddress(signer.signingKey.publicKey).toLowerCase();
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
    expiresAfterMs = 5000,
    timeoutMs = 5000,
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
    const body: ScheduleCancelRequest = {
      action,
      nonce,
      signature,
      ...(vault !== undefined ? { vaultAddress: vault } : {}),
      ...(expiresAfter !== undefined ? { expiresAfter } : {}),
    };

    const response = await this.#transport.postJson("/exchange", body, { signal });
    try {
      return this.#read(response, { nonce, expiresAfter, time });
    } catch (error) {
      // Every answer carries the exchange's Date: the caller's clock keeping uses refusals' too.
      if (response.date !== undefined && typeof error === "object" && error !== null)
        answerDates.set(error, response.date);
      throw error;
    }
  }

  #read(
    response: Awaited<ReturnType<HttpTransport["postJson"]>>,
    {
      nonce,
      expiresAfter,
      time,
    }: { nonce: number; expiresAfter: number | undefined; time: number | undefined },
  ): ScheduleCancelResult {
    const base = { endpoint: "exchange" as const, status: response.status, url: this.#url };
    const statusKind = classifyHttpStatus(response.status);
    if (statusKind !== undefined) {
      throw new HyperliquidApiError({ ...base, kind: statusKind, serverMessage: response.bodyText });
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
    const answer = envelope.data;
    if (answer.status === "err") {
      const { kind, nonceDetail } = classifyExchangeError(answer.response);
      throw new HyperliquidApiError({ ...base, kind, nonceDetail, serverMessage: answer.response });
    }
    if (!OK_TYPES.has(answer.response.type)) {
      throw new HyperliquidApiError({
        ...base,
        kind: "malformed_response",
        serverMessage: response.bodyText,
        reason: `unexpected response type ${JSON.stringify(answer.response.type)}`,
      });
    }
    // An error anywhere in the body is not a confirmation, whatever the envelope says.
    const inner = findErrorInAnswer(response.json);
    if (inner !== null) {
      const { kind, nonceDetail } = classifyExchangeError(inner);
      throw new HyperliquidApiError({ ...base, kind, nonceDetail, serverMessage: inner });
    }
    return {
      nonce,
      expiresAfter,
      time,
      responseType: answer.response.type,
      latencyMs: response.elapsedMs,
      serverDate: response.date,
    };
  }

  /** Ends the keep-alive sockets. Idempotent. */
  close(): void {
    this.#transport.close();
  }
}
