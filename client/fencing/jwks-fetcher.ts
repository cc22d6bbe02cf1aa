import type { JSONWebKeySet } from "jose";
import { raceSignal } from "../race-signal.js";
import { TurnstileError } from "../turnstile-error.js";

/** Settings of a JwksFetcher. */
export interface JwksFetcherOptions {
  /** How long fetched keys are used before they are fetched again (default 5 min). */
  maxAgeMs?: number;
  /** The least time between two fetches forced by an unknown `kid` (default 30 s): a flood of forged kids costs one fetch. */
  refreshCooldownMs?: number;
  /** Bound of one fetch (default 5 s). */
  timeoutMs?: number;
  /** The fetch to use (default: the global fetch). */
  fetch?: typeof fetch;
}

/**
 * The coordinators' fencing keys from their JWKS endpoint (`GET /.well-known/jwks.json` on
 * `serve --http`): fetched on first use, cached for `maxAgeMs`, and fetched again when a proof names
 * an unknown `kid` (at most once per `refreshCooldownMs`). Pass it to `verifyFencingProof` or a guard.
 * A failed fetch keeps serving the last keys it had; with none, it rejects with a TurnstileError
 * (reason "connection").
 */
export class JwksFetcher {
  readonly url: string;
  readonly #maxAgeMs: number;
  readonly #cooldownMs: number;
  readonly #timeoutMs: number;
  readonly #fetch: typeof fetch;
  #cached: { keys: JSONWebKeySet; atMs: number } | undefined;
  #inFlight: Promise<JSONWebKeySet> | undefined;
  #lastFetchMs = Number.NEGATIVE_INFINITY;
  #fetches = 0;

  /** `url`: the JWKS URL, or the coordinator's `--http` HOST:PORT (then http://HOST:PORT/.well-known/jwks.json). */
  constructor(url: string, options: JwksFetcherOptions = {}) {
    this.url = /^https?:\/\//.test(url) ? url : `http://${url}/.well-known/jwks.json`;
    this.#maxAgeMs = options.maxAgeMs ?? 300_000;
    this.#cooldownMs = options.refreshCooldownMs ?? 30_000;
    this.#timeoutMs = options.timeoutMs ?? 5_000;
    this.#fetch = options.fetch ?? fetch;
  }

  /** How many times the key set was fetched. */
  get fetches(): number {
    return this.#fetches;
  }

  /** The cached keys, fetched when there are none or they are older than `maxAgeMs`. */
  async keys(options: { signal?: AbortSignal } = {}): Promise<JSONWebKeySet> {
    const cached = this.#cached;
    if (cached && performance.now() - cached.atMs < this.#maxAgeMs) return cached.keys;
    return this.#fetchOnce(options.signal);
  }

  /** The keys fetched again (a proof named an unknown `kid`), unless the last fetch is more recent than the cooldown. */
  async refreshed(options: { signal?: AbortSignal } = {}): Promise<JSONWebKeySet> {
    if (this.#cached && performance.now() - this.#lastFetchMs < this.#cooldownMs) return this.#cached.keys;
    return this.#fetchOnce(options.signal);
  }

  #fetchOnce(signal?: AbortSignal): Promise<JSONWebKeySet> {
    this.#inFlight ??= this.#load().finally(() => {
      this.#inFlight = undefined;
    });
    return signal ? raceSignal(this.#inFlight, signal) : this.#inFlight;
  }

  async #load(): Promise<JSONWebKeySet> {
    this.#lastFetchMs = performance.now();
    this.#fetches += 1;
    try {
      const res = await this.#fetch(this.url, { signal: AbortSignal.timeout(this.#timeoutMs) });
      if (!res.ok) throw new Error(`HTTP ${res.status}`);
      const body = (await res.json()) as JSONWebKeySet;
      if (!Array.isArray(body?.keys)) throw new Error('no "keys" array');
      this.#cached = { keys: body, atMs: performance.now() };
      return body;
    } catch (err) {
      if (this.#cached) return this.#cached.keys;
      throw new TurnstileError(
        "connection",
        `cannot fetch the fencing keys from ${this.url}: ${(err as Error).message}`,
        {
          cause: err,
        },
      );
    }
  }
}
