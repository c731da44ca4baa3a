import { getAddress } from "ethers/address";
import { BaseError } from "./errors/base.js";

export class InvalidAddressError extends BaseError {
  override name = "InvalidAddressError";
  readonly address: string;
  constructor(address: string, where?: string) {
    super(`Invalid address ${JSON.stringify(address)}${where ? ` in ${where}` : ""}.`, {
      metaMessages: ["An address is 0x followed by 40 hexadecimal digits (42 characters)."],
    });
    this.address = address;
  }
}

const ADDRESS_RE = /^0x[0-9a-fA-F]{40}$/;

/** True for a 42-character hex address (any case; the checksum is not enforced, as the exchange does not). */
export function isAddress(value: unknown): value is string {
  return typeof value === "string" && ADDRESS_RE.test(value);
}

/** Validates and returns the lower-case form, which is what goes on the wire. */
export function normalizeAddress(value: string, where?: string): `0x${string}` {
  if (!isAddress(value)) throw new InvalidAddressError(value, where);
  return value.toLowerCase() as `0x${string}`;
}

/** Checksummed form, for people. */
export function checksumAddress(value: string): string {
  return getAddress(value.toLowerCase());
}
