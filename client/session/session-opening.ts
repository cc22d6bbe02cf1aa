import type { HeldLock, Open, Opened } from "../../gen/ts/turnstile/v1/turnstile.js";
import { durationFromMs } from "../../wire/duration.js";

/** What an `opened` means: a new session, the resumed one, or a new one where a resume was asked. */
export type OpenedOutcome = "new" | "resumed" | "not-resumed";

/**
 * A session's identity on the coordinators and its handshake: the id and resume secret it was
 * given, the `open` each stream starts with (a resume claims the holds, see SessionResumer), and
 * what an `opened` answer means.
 */
export class SessionOpening {
  readonly #options: { clientName: string; ttlMs: number };
  readonly #claim: () => HeldLock[];
  #resume = { sessionId: "", secret: "" };
  #failedOpens = 0;
  #renewedAtMs = Number.NEGATIVE_INFINITY;

  /** `claim` builds the `held` of a resume's `open`. */
  constructor(options: { clientName: string; ttlMs: number }, claim: () => HeldLock[]) {
    this.#options = options;
    this.#claim = claim;
  }

  /** The server's id for this session; empty until opened. */
  get sessionId(): string {
    return this.#resume.sessionId;
  }

  /** True once a coordinator opened the session (later streams resume it). */
  get established(): boolean {
    return this.#resume.sessionId !== "";
  }

  /** Streams that ended before the session was ever opened. */
  get failedOpens(): number {
    return this.#failedOpens;
  }

  /** Send time of the newest request that renewed the session record (an answered open). */
  get renewedAtMs(): number {
    return this.#renewedAtMs;
  }

  /** The `open` of the next stream: a fresh session, or a resume claiming every hold. */
  openMessage(): Open {
    const { clientName, ttlMs } = this.#options;
    const { sessionId, secret } = this.#resume;
    const held = sessionId === "" ? [] : this.#claim();
    return { clientName, ttl: durationFromMs(ttlMs), resumeSessionId: sessionId, resumeSecret: secret, held };
  }

  /** Reads an `opened` for an open sent at `openSentAtMs`; on success the session is renewed from then. */
  opened(opened: Opened, openSentAtMs: number): OpenedOutcome {
    const resuming = this.established;
    if (resuming && (!opened.resumed || opened.sessionId !== this.#resume.sessionId)) return "not-resumed";
    this.#resume = { sessionId: opened.sessionId, secret: opened.resumeSecret || this.#resume.secret };
    this.#renewedAtMs = openSentAtMs;
    return resuming ? "resumed" : "new";
  }

  /** Notes a stream that ended; it counts as a failed open while the session was never opened. */
  streamEnded(): void {
    if (!this.established) this.#failedOpens += 1;
  }
}
