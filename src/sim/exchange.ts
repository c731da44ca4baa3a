/**
 * POST /exchange: the signed `scheduleCancel` action, checked in the order of docs/exchange-behaviour.md §6 and answered
 * with the real strings of docs/exchange-behaviour.md §5.
 */
import { z } from "zod";
import { utcDay } from "../core/clock.js";
import { recoverL1ActionSignerSync } from "../protocol/hyperliquid/signing.js";
import { volumeText } from "./format.js";
import { OrderActionIn, placeOrders } from "./orders.js";
import type { SimStore } from "./state.js";

/** The nonce window (T − 2 d, T + 1 d) of the current docs (docs/exchange-behaviour.md §8). */
export const NONCE_WINDOW_BEFORE_MS = 2 * 86_400_000;
export const NONCE_WINDOW_AFTER_MS = 86_400_000;
/** The 100 highest nonces are kept per signer (docs/exchange-behaviour.md §8). */
export const NONCE_SET_SIZE = 100;
export const MIN_SCHEDULE_LEAD_MS = 5_000;
export const VOLUME_GATE_USD = 1_000_000;
export const DESERIALIZE_ERROR = "Failed to deserialize the JSON body into the target type";

export type ExchangeRules = {
  isMainnet: boolean;
  successType: "scheduleCancel" | "default";
  volumeGate: boolean;
  volumeGateOnRemove: boolean;
  dailyTriggerLimit: number;
  dailyLimitMessage: string;
  /** the post-only window after a network upgrade (the `postOnlyWindow` fault): only Alo orders are taken */
  postOnlyWindow?: boolean;
};

export type HandlerResult = { status: number; contentType: string; body: string };

const U64 = z.number().int().min(0).max(Number.MAX_SAFE_INTEGER);
const Hex32 = z.string().regex(/^0x[0-9a-fA-F]{1,64}$/);

/**
 * What deserializes. `time: null` is accepted as "absent" by the real server's Option<u64>, but the
 * server hashes the action as sent, so a null changes the recovered signer (docs/exchange-behaviour.md §2).
 * Unknown keys inside the action are refused (a renamed key gives 422, docs/exchange-behaviour.md §5).
 */
const ScheduleCancelActionIn = z.strictObject({
  type: z.literal("scheduleCancel"),
  time: U64.nullable().optional(),
});
/**
 * `{"type":"cancel","cancels":[{"a":asset,"o":oid}],"f":true}` (docs/exchange-record.md, "Cancel"). `f` (fast)
 * deserializes as a boolean; like the real server the simulator hashes the action it understood, in which a false
 * `f` is absent, so an action signed with `"f": false` recovers another address and is refused (Hyperliquid docs, exchange endpoint, "Cancel order(s)":
 * "actions hashed with `f: false` will be rejected").
 */
const CancelActionIn = z.strictObject({
  type: z.literal("cancel"),
  cancels: z.array(z.strictObject({ a: z.number().int().min(0), o: U64 })).min(1),
  f: z.boolean().optional(),
});

/**
 * The simulator's refusal of a fast cancel of a trigger order, one status inside an "ok" answer like the other
 * per-order cancel errors. The exchange's own wording is not published (the docs say only that fast cancels are
 * "rejected for canceling trigger orders"); this text is the simulator's (docs/exchange-record.md, "Cancel").
 */
export function fastTriggerError(asset: number): string {
  return `Fast cancel cannot be used to cancel trigger orders. asset=${asset}`;
}

/**
 * The cumulative cancel limit for an address whose request limit is `limit`: cancels may go on past the request
 * limit up to `min(limit + 100000, limit * 2)` (Hyperliquid docs, rate limits and user limits), so an address that has used its
 * budget can still pull its orders.
 */
export function cancelLimit(limit: number): number {
  return Math.min(limit + 100_000, limit * 2);
}

/** The per-order refusal the real exchange answers for an unknown, cancelled or filled order. */
export function neverPlacedError(asset: number): string {
  return `Order was never placed, already canceled, or filled. asset=${asset}`;
}

/**
 * `{"type":"noop"}`: marks the nonce used and changes nothing else (Hyperliquid docs, exchange endpoint, "Invalidate
 * pending nonce (noop)"; answered `{"status":"ok","response":{"type":"default"}}`); `doctor --probe` sends one.
 */
const NoopActionIn = z.strictObject({ type: z.literal("noop") });

const ExchangeRequest = z.object({
  action: z.discriminatedUnion("type", [ScheduleCancelActionIn, CancelActionIn, OrderActionIn, NoopActionIn]),
  nonce: U64,
  signature: z.object({ r: Hex32, s: Hex32, v: z.number().int() }),
  vaultAddress: z
    .string()
    .regex(/^0x[0-9a-fA-F]{40}$/)
    .nullable()
    .optional(),
  expiresAfter: U64.nullable().optional(),
});

function json(body: unknown): HandlerResult {
  return { status: 200, contentType: "application/json", body: JSON.stringify(body) };
}

export function handleExchange(
  store: SimStore,
  rules: ExchangeRules,
  rawBody: string,
): HandlerResult & { response: unknown } {
  const now = store.clock.now();
  let raw: unknown;
  try {
    raw = JSON.parse(rawBody);
  } catch {
    raw = undefined;
  }
  const parsed = raw === undefined ? undefined : ExchangeRequest.safeParse(raw);
  const record = {
    receivedAt: now,
    signer: null as string | null,
    user: null as string | null,
    vaultAddress: null as string | null,
    action: (raw as { action?: unknown } | undefined)?.action ?? null,
    nonce: null as number | null,
    expiresAfter: null as number | null,
  };
  if (!parsed?.success) {
    store.recordAction({ ...record, httpStatus: 422, accepted: false, response: DESERIALIZE_ERROR });
    return { status: 422, contentType: "text/plain; charset=utf-8", body: DESERIALIZE_ERROR, response: null };
  }
  const req = parsed.data;
  // The action exactly as sent (key order and a null `time` included): that is what was signed.
  const sentAction = (raw as { action: Record<string, unknown> }).action;
  record.nonce = req.nonce;
  record.expiresAfter = req.expiresAfter ?? null;
  record.vaultAddress = req.vaultAddress ? req.vaultAddress.toLowerCase() : null;

  // Set once the action reaches the L1 (its nonce is spent): from then on it is a transaction the explorer
  // lists, with error null when accepted or the refusal text (docs/exchange-record.md, "The record").
  let onChain: { user: string; signer: string; target: string | null } | null = null;
  const finish = (accepted: boolean, response: unknown) => {
    const body = accepted ? { status: "ok", response } : { status: "err", response };
    store.recordAction({ ...record, httpStatus: 200, accepted, response: body });
    if (onChain) {
      store.recordTx([onChain.user, onChain.signer, onChain.target], {
        action: sentAction,
        error: accepted ? null : String(response),
        user: onChain.user,
        nonce: req.nonce,
      });
    }
    return { ...json(body), response: body };
  };
  const err = (message: string) => finish(false, message);

  // 2. expiresAfter: "a timestamp after which the action will be rejected" (docs/exchange-behaviour.md §9).
  if (req.expiresAfter !== undefined && req.expiresAfter !== null && now > req.expiresAfter) {
    return err("Action already expired");
  }
  // 3. Nonce window, checked before recovery: the real replies name no address (docs/exchange-behaviour.md §6).
  const min = now - NONCE_WINDOW_BEFORE_MS;
  const max = now + NONCE_WINDOW_AFTER_MS;
  if (req.nonce <= min) return err(`Invalid nonce: nonce too low ${req.nonce} < ${min}`);
  if (req.nonce >= max) return err(`Invalid nonce: nonce too high ${req.nonce} > ${max}`);
  // 4. Recover the signer; it must be a registered user or an agent approved for one. Every signature is
  //    recovered in full by the library (no per-signer shortcut): an altered r, s or v recovers another address
  //    (or none), exactly as on the real exchange.
  let signer: string;
  try {
    signer = recoverL1ActionSignerSync({
      action: signedForm(sentAction),
      nonce: req.nonce,
      vaultAddress: req.vaultAddress ?? null,
      expiresAfter: req.expiresAfter ?? null,
      isMainnet: rules.isMainnet,
      signature: req.signature,
    }).toLowerCase();
  } catch {
    return err("Unable to recover signer.");
  }
  record.signer = signer;
  const user = store.userForSigner(signer);
  if (!user) return err(`L1 error: User or API Wallet ${signer} does not exist.`);
  record.user = user;
  // 5. Per-signer nonce set: unused, and above the smallest of the 100 kept.
  const set = store.nonces.get(signer) ?? [];
  if (set.includes(req.nonce)) return err(`Invalid nonce: duplicate nonce ${req.nonce}`);
  const smallest = set[0];
  if (set.length >= NONCE_SET_SIZE && smallest !== undefined && req.nonce < smallest) {
    return err(`Invalid nonce: nonce too low ${req.nonce} < ${smallest}`);
  }
  // From here on the action is processed by the L1, so its nonce is spent even if the action then fails
  // (choice: the docs say a processed `noop` marks a nonce used; pre-execution refusals above do not).
  insertNonce(set, req.nonce);
  store.nonces.set(signer, set);
  onChain = { user, signer, target: null };

  // 6. vaultAddress: a vault or sub-account registered to the signer's user; it becomes the target.
  let target = store.account(user);
  if (req.vaultAddress) {
    const vault = store.account(req.vaultAddress);
    if (!vault || vault.master !== user)
      return err(`Vault not registered: ${req.vaultAddress.toLowerCase()}`);
    target = vault;
  }
  if (!target) return err(`L1 error: User or API Wallet ${signer} does not exist.`);
  record.user = target.address;
  onChain.target = target.address;
  // 7. Address-based budget (docs/exchange-behaviour.md §10), counted per target account (sub-accounts are separate users).
  //    Cancels have their own, higher cumulative limit (cancelLimit).
  target.requestsUsed++;
  const limit =
    target.addressBudget === undefined
      ? undefined
      : req.action.type === "cancel"
        ? cancelLimit(target.addressBudget)
        : target.addressBudget;
  if (limit !== undefined && target.requestsUsed > limit) {
    return err(
      `Too many cumulative requests sent (${target.requestsUsed} > ${limit}) for cumulative volume traded $${volumeText(target.volumeUsd)}. Place taker orders to free up 1 request per USDC traded.`,
    );
  }
  // A noop passes no volume gate and spends no trigger: the nonce and one unit of the budget are all it uses.
  if (req.action.type === "noop") return finish(true, { type: "default" });
  if (req.action.type === "order") {
    // Orders spend no trigger and pass no volume gate; one status per order, in order (sim/orders.ts).
    const statuses = placeOrders(store, target, req.action, {
      postOnlyWindow: rules.postOnlyWindow === true,
    });
    return finish(true, { type: "order", data: { statuses } });
  }
  if (req.action.type === "cancel") {
    // Cancels spend no trigger and pass no volume gate; one status per order, in order. A fast cancel of a
    // trigger order is refused for that order, which stays on the book.
    const acc = target;
    const fast = req.action.f === true;
    const statuses = req.action.cancels.map(({ a, o }) => {
      const order = acc.orders.find((x) => x.oid === o);
      if (!order || store.assetIndex(order.coin, order.dex) !== a) return { error: neverPlacedError(a) };
      if (fast && order.isTrigger) return { error: fastTriggerError(a) };
      store.endOrder(acc, o, "canceled", now);
      return "success" as const;
    });
    return finish(true, { type: "cancel", data: { statuses } });
  }
  const time = typeof req.action.time === "number" ? req.action.time : null;
  // 8. Minimum lead time, checked before the volume gate (docs/exchange-behaviour.md §6).
  if (time !== null && time < now + MIN_SCHEDULE_LEAD_MS) {
    return err("Scheduled cancel time too early, must be at least 5 seconds from now.");
  }
  // 9. Volume gate: measured on the master's volume (fee-tier volume is aggregated at the master; a vault
  //    registered through `vaults` inherits it). Removal is gated too by default (docs/exchange-behaviour.md §4).
  const gateAccount = target.master ? (store.account(target.master) ?? target) : target;
  const gateOn = gateAccount.volumeGate ?? rules.volumeGate;
  if (gateOn && (time !== null || rules.volumeGateOnRemove) && gateAccount.volumeUsd < VOLUME_GATE_USD) {
    return err(
      `Cannot set scheduled cancel time until enough volume traded. Required: $${VOLUME_GATE_USD}. Traded: $${volumeText(gateAccount.volumeUsd)}.`,
    );
  }
  // 10. Daily trigger limit: setting is refused once the day's triggers are used; removal is always fine.
  if (time !== null && store.triggersOn(target.address, utcDay(now)) >= rules.dailyTriggerLimit) {
    return err(rules.dailyLimitMessage);
  }
  store.setSchedule(target.address, time);
  return finish(true, { type: rules.successType });
}

/** The action as the server hashes it: a cancel's `f: false` is dropped (it deserializes as "not fast"). */
function signedForm(action: Record<string, unknown>): Record<string, unknown> {
  if (action.type !== "cancel" || action.f !== false) return action;
  const { f: _dropped, ...rest } = action;
  return rest;
}

function insertNonce(set: number[], nonce: number): void {
  let i = set.length;
  while (i > 0 && (set[i - 1] as number) > nonce) i--;
  set.splice(i, 0, nonce);
  if (set.length > NONCE_SET_SIZE) set.shift();
}
