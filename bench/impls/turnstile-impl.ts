import { readFileSync } from "node:fs";
import { TurnstileClient } from "../../client/index.js";
import type { LockImpl } from "./lock-impl.js";

const REPO_VERSION = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")).version;

/**
 * Turnstile through its TypeScript client: one TurnstileClient (one session stream) per contender,
 * against a coordinator running in its own process. Waiters are granted by a pushed message.
 */
export function turnstileImpl(address: string): LockImpl {
  return {
    id: "turnstile",
    label: "Turnstile",
    waits: "FIFO queue in Redis; the grant is pushed on the session stream",
    version: `turnstile ${REPO_VERSION} (this repo)`,
    wireCommands: ["evalsha", "eval"],
    async connect() {
      const client = new TurnstileClient(address, { clientName: "bench" });
      await client.connect();
      return {
        async acquire(name) {
          const lock = await client.acquire(name);
          return { release: () => lock.release() };
        },
        close: () => client.close(),
      };
    },
  };
}
