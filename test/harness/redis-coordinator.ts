import { pino } from "pino";
import { Coordinator } from "../../server/coordinator.js";
import type { RedisTarget } from "../../server/store/redis/connection/redis-connection.js";
import { RedisStore } from "../../server/store/redis/redis-store.js";
import { spawnTurnstile, type TurnstileProcess } from "./run-turnstile.js";
import { waitForOutput } from "./wait-for-output.js";

/** An in-process coordinator on a free port keeping its locks in the given Redis deployment. */
export async function startTargetCoordinator(target: RedisTarget): Promise<{ address: string; stop(): Promise<void> }> {
  const coordinator = new Coordinator({
    store: new RedisStore({ target }),
    log: pino({ level: process.env.TEST_LOG ?? "silent" }),
    listen: "127.0.0.1:0",
    shutdownGraceMs: 200,
  });
  const port = await coordinator.start();
  return { address: `127.0.0.1:${port}`, stop: () => coordinator.stop() };
}

/** `turnstile serve --listen 127.0.0.1:0 ARGS...` as a process, resolved once it listens. */
export async function spawnServe(args: string[]): Promise<{ address: string; serve: TurnstileProcess }> {
  const serve = spawnTurnstile(["serve", "--listen", "127.0.0.1:0", ...args], { timeoutMs: 120_000 });
  const [, port] = await waitForOutput(serve.child, /"port":(\d+)[^\n]*"msg":"listening"/, 15_000);
  return { address: `127.0.0.1:${port}`, serve };
}
