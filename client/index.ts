export { Lock } from "./lock.js";
export { LostLockError, type LostLockReason } from "./lost-lock-error.js";
export {
  type AcquireOptions,
  type TryAcquireOptions,
  TurnstileClient,
  type TurnstileClientOptions,
} from "./turnstile-client.js";
export { TurnstileError, type TurnstileErrorReason } from "./turnstile-error.js";
