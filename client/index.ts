export type { BackoffOptions } from "./connection/backoff.js";
export type { TlsOptions } from "./connection/channel-credentials.js";
export { type CampaignOptions, Election, type Leader } from "./election/election.js";
export { Leadership } from "./election/leadership.js";
export { FencingProofError, type FencingRefusal } from "./fencing/fencing-proof-error.js";
export { JwksFetcher, type JwksFetcherOptions } from "./fencing/jwks-fetcher.js";
export {
  PostgresFenceGuard,
  type PostgresFenceGuardOptions,
  type SqlQueryable,
} from "./fencing/postgres-fence-guard.js";
export { type GuardedWrite, type RedisEval, RedisFenceGuard } from "./fencing/redis-fence-guard.js";
export {
  type FencingClaims,
  type VerifyFencingProofOptions,
  verifyFencingProof,
} from "./fencing/verify-fencing-proof.js";
export { Lock, type Successor } from "./locks/lock.js";
export { LockSet } from "./locks/lock-set.js";
export { ReadWriteLock } from "./locks/read-write-lock.js";
export type { ReleaseRequest } from "./locks/release-request.js";
export { Semaphore } from "./locks/semaphore.js";
export { LostLockError, type LostLockReason } from "./lost-lock-error.js";
export type { LockClaimInput } from "./session/requests/set-acquires-in-flight.js";
export { type FenceCheck, TurnstileClient } from "./turnstile-client.js";
export type {
  TurnstileClientEvents,
  TurnstileClientState,
  TurnstileSessionEvent,
} from "./turnstile-client-events.js";
export type { AcquireOptions, TryAcquireOptions, TurnstileClientOptions } from "./turnstile-client-options.js";
export { type Blocker, type DeadlockStep, TurnstileError, type TurnstileErrorReason } from "./turnstile-error.js";
