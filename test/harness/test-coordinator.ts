import { pino } from "pino";
import type { Limits } from "../../server/config/limits.js";
import { Coordinator } from "../../server/coordinator.js";
import type { FencingSigner } from "../../server/security/fencing/fencing-signer.js";
import { RedisStore } from "../../server/store/redis/redis-store.js";

/** An in-process coordinator on a free port, for tests that inspect its lock table. */
export interface TestCoordinator {
  address: string;
  coordinator: Coordinator;
  stop(): Promise<void>;
}

/**
 * Starts a coordinator on 127.0.0.1:0 against `redisUrl`; logs stay silent unless TEST_LOG is set.
 * `commandTimeoutMs` shortens the store's command timeout (stall tests); `fencing` signs proofs.
 */
export async function startCoordinator(
  redisUrl: string,
  limits: Partial<Limits> = {},
  store: { commandTimeoutMs?: number } = {},
  options: { fencing?: FencingSigner } = {},
): Promise<TestCoordinator> {
  const log = pino({ level: process.env.TEST_LOG ?? "silent" });
  const coordinator = new Coordinator({
    store: new RedisStore({ url: redisUrl, commandTimeoutMs: store.commandTimeoutMs }),
    log,
    listen: "127.0.0.1:0",
    limits,
    shutdownGraceMs: 500,
    fencing: options.fencing,
  });
  const port = await coordinator.start();
  return { address: `127.0.0.1:${port}`, coordinator, stop: () => coordinator.stop() };
}
