import { TurnstileError } from "../../turnstile-error.js";

/** The options every acquire takes, as a caller from plain JavaScript may pass them. */
interface AcquireOptionsInput {
  waitMs?: unknown;
  owner?: unknown;
  value?: unknown;
  onQueued?: unknown;
  lockDelayMs?: unknown;
  signal?: unknown;
}

/** What each option must be: a check and the words for the message. */
const EXPECTED: Record<keyof AcquireOptionsInput, [(v: unknown) => boolean, string]> = {
  waitMs: [(v) => typeof v === "number", "a number of ms"],
  owner: [(v) => typeof v === "string", "a string"],
  value: [(v) => v instanceof Uint8Array, "a Uint8Array (e.g. new TextEncoder().encode(text))"],
  onQueued: [(v) => typeof v === "function", "a function"],
  lockDelayMs: [(v) => typeof v === "number", "a number of ms"],
  signal: [(v) => v instanceof AbortSignal, "an AbortSignal"],
};

// Built once: the check runs on every acquire.
const CHECKS = Object.entries(EXPECTED);

/** How a wrongly typed value reads in a message: its type, and arrays and null by name. */
export function typeOf(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  return typeof value === "object" ? `a ${value.constructor?.name ?? "object"}` : `a ${typeof value}`;
}

/**
 * Checks the types of an acquire's options (callers from plain JavaScript, or `as any`), before
 * anything is registered or sent; throws a TurnstileError ('invalid-argument') naming the field.
 */
export function checkAcquireOptionTypes(options: unknown): void {
  if (typeof options !== "object" || options === null || Array.isArray(options)) {
    throw new TurnstileError("invalid-argument", `options: expected an object, got ${typeOf(options)}`);
  }
  const given = options as Record<string, unknown>;
  for (const [field, [ok, expected]] of CHECKS) {
    const value = given[field];
    if (value !== undefined && !ok(value)) {
      throw new TurnstileError("invalid-argument", `${field}: expected ${expected}, got ${typeOf(value)}`);
    }
  }
}

/** Checks that a lock name is a string; throws a TurnstileError ('invalid-argument') otherwise. */
export function checkNameType(name: unknown, field = "name"): void {
  if (typeof name !== "string") {
    throw new TurnstileError("invalid-argument", `${field}: expected a string, got ${typeOf(name)}`);
  }
}
