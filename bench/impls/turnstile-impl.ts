import { readFileSync } from "node:fs";
import { TurnstileClient } from "../../client/index.js";
import type { LockImpl } from "./lock-impl.js";

const REPO_VERSION = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")).version;

/** Which store the coordinator runs on: Redis, Redis with replica acks, or the embedded in-process store. */
export type TurnstileStore = "redis" | "embedded" | "replicated";

const BY_STORE = {
  redis: {
    id: "turnstile",
    label: "Turnstile",
    waits: "FIFO queue in Redis; the grant is pushed on the session stream",
    wireCommands: ["evalsha", "eval"],
  },
  // Its Redis is not the shared one the bench counts commands on: no wire count.
  replicated: {
    id: "turnstile-replicated",
    label: "Turnstile (majority-acked, 1 master + 2 replicas)",
    waits: "FIFO queue in Redis; every state change confirmed by WAIT 1 (2 of 3 nodes) before it is told",
    wireCommands: undefined,
  },
  embedded: {
    id: "turnstile-embedded",
    label: "Turnstile (embedded store)",
    waits: "FIFO queue in the coordinator's memory; the grant is pushed on the session stream",
    wireCommands: undefined,
  },
} as const;

/**
 * Turnstile through its TypeScript client: one TurnstileClient (one session stream) per contender,
 * against a coordinator running in its own process on `store`. Waiters are granted by a pushed message.
 */
export function turnstileImpl(address: string, store: TurnstileStore = "redis"): LockImpl {
  return {
    ...BY_STORE[store],
    version: `turnstile ${REPO_VERSION} (this repo)`,
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
