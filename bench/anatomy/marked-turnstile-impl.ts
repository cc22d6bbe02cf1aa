import { TurnstileClient } from "../../client/index.js";
import type { LockImpl } from "../impls/lock-impl.js";
import type { MarkRecorder } from "./mark-recorder.js";

/**
 * Turnstile through its TypeScript client, like turnstileImpl, with the bench's own points marked
 * for the anatomy: "acquire-called" and "resolved" around each acquire, "release-called" before each
 * release (each with the client's session id and the lock name).
 */
export function markedTurnstileImpl(address: string, recorder: MarkRecorder): LockImpl {
  return {
    id: "turnstile-anatomy",
    label: "Turnstile (anatomy: wire marks recorded)",
    waits: "FIFO queue in Redis; the grant is pushed on the session stream",
    version: "this repo",
    async connect() {
      const client = new TurnstileClient(address, { clientName: "bench-anatomy" });
      await client.connect();
      return {
        async acquire(name) {
          recorder.mark("acquire-called", client.sessionId, name);
          const lock = await client.acquire(name);
          recorder.mark("resolved", client.sessionId, name);
          return {
            release: () => {
              recorder.mark("release-called", client.sessionId, name);
              return lock.release();
            },
          };
        },
        close: () => client.close(),
      };
    },
  };
}
