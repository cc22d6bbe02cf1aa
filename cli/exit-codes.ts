/**
 * Exit codes of `turnstile lock` besides the command's own (passed through; 128+N when the
 * command was killed by signal N). Chosen outside the range commands commonly use.
 */
export const LockExit = {
  /** Bad flags or arguments. */
  usage: 2,
  /** The coordinator could not be reached or refused the request. */
  unavailable: 69,
  /** The lock was not acquired within --wait. */
  notAcquired: 75,
  /** The lock was lost while the command ran; the command was stopped. */
  lost: 76,
  /** The command could not be run: not executable. */
  cannotExecute: 126,
  /** The command could not be run: not found. */
  notFound: 127,
} as const;
