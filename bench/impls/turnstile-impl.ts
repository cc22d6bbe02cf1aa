import { readFileSync } from "node:fs";
import { type TlsOptions, TurnstileClient } from "../../client/index.js";
import type { LockImpl } from "./lock-impl.js";

const REPO_PACKAGE = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8"));

/**
 * Which coordinator: on Redis, on Redis with replica acks, on the embedded in-process store (no
 * Redis hop), on Redis behind mTLS with a client certificate per client (the cost of TLS), or on
 * Redis signing a fencing proof into every grant (the cost of `--fencing-key`).
 */
export type TurnstileStore = "redis" | "embedded" | "mtls" | "replicated" | "fencing";

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
  mtls: {
    id: "turnstile-mtls",
    label: "Turnstile (mTLS)",
    waits: "FIFO queue in Redis; the grant is pushed on the session stream (over mTLS)",
    wireCommands: ["evalsha", "eval"],
  },
  fencing: {
    id: "turnstile-fencing",
    label: "Turnstile (signed fencing proofs)",
    waits: "FIFO queue in Redis; the grant, with its Ed25519-signed fencing proof, is pushed on the session stream",
    wireCommands: ["evalsha", "eval"],
  },
} as const;

/**
 * Turnstile through its TypeScript client: one TurnstileClient (one session stream) per contender,
 * against a coordinator running in its own process on `store` (`tls`: the client's mTLS settings).
 * Waiters are granted by a pushed message.
 */
export function turnstileImpl(address: string, store: TurnstileStore = "redis", tls?: TlsOptions): LockImpl {
  return {
    ...BY_STORE[store],
    version: `${REPO_PACKAGE.name} ${REPO_PACKAGE.version} (this repo)`,
    async connect() {
      const client = new TurnstileClient(address, { clientName: "bench", tls });
      await client.connect();
      return {
        // A Lock is a HeldLock as it is: no wrapper to build per acquire.
        acquire: (name) => client.acquire(name),
        close: () => client.close(),
      };
    },
  };
}
