import { pino } from "pino";
import { Coordinator } from "../../server/coordinator.js";
import { MemoryStore } from "../../server/store/memory/memory-store.js";

/** A coordinator on the embedded store, silent, on a free loopback port, and the address it serves. */
export interface EmbeddedCoordinator {
  readonly coordinator: Coordinator;
  readonly address: string;
}

/**
 * Starts a coordinator on the embedded store (no redis-server needed) with a short shutdown grace,
 * for suites that only need something to talk to; stop it with `coordinator.stop()`.
 */
export async function startEmbeddedCoordinator(): Promise<EmbeddedCoordinator> {
  const coordinator = new Coordinator({
    store: new MemoryStore(),
    log: pino({ level: "silent" }),
    listen: "127.0.0.1:0",
    shutdownGraceMs: 200,
  });
  return { coordinator, address: `127.0.0.1:${await coordinator.start()}` };
}
