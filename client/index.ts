export type { BackoffOptions } from "./backoff.js";
export type { TlsOptions } from "./channel-credentials.js";
export { type CampaignOptions, Election, type Leader } from "./election.js";
export { Leadership } from "./leadership.js";
export { Lock } from "./lock.js";
export { LostLockError, type LostLockReason } from "./lost-lock-error.js";
export { ReadWriteLock } from "./read-write-lock.js";
export { Semaphore } from "./semaphore.js";
export {
  type AcquireOptions,
  type TryAcquireOptions,
  TurnstileClient,
  type TurnstileClientOptions,
} from "./turnstile-client.js";
export type {
  TurnstileClientEvents,
  TurnstileClientState,
  TurnstileSessionEvent,
} from "./turnstile-client-events.js";
export { type Blocker, TurnstileError, type TurnstileErrorReason } from "./turnstile-error.js";
