import { pino } from "pino";
import type { ConsoleAccess } from "../../server/console/access/console-access.js";
import { TokenAccess } from "../../server/console/access/token-access.js";
import { ConsoleHttpHandler } from "../../server/console/console-http-handler.js";
import { ConsoleHttpServer } from "../../server/console/console-http-server.js";
import type { ConsoleLimits } from "../../server/console/console-limits.js";
import { startCoordinator, type TestCoordinator } from "./test-coordinator.js";

/** Tokens of the console test callers: an admin of everything, a reader of everything, a reader of `billing/`. */
export const CONSOLE_TOKENS = { admin: "admin-token-1", reader: "reader-token-2", billing: "billing-token-3" };

/**
 * The console tests' access rules: a real token → identity → per-prefix rights map (TokenAccess,
 * the seam the security module's token file and policy plug into).
 */
export const consoleTestAccess = (): TokenAccess =>
  new TokenAccess([
    { identity: "ops-admin", token: CONSOLE_TOKENS.admin, grants: [{ prefix: "", rights: ["read", "admin"] }] },
    { identity: "viewer", token: CONSOLE_TOKENS.reader, grants: [{ prefix: "", rights: ["read"] }] },
    { identity: "billing-viewer", token: CONSOLE_TOKENS.billing, grants: [{ prefix: "billing/", rights: ["read"] }] },
  ]);

/** A coordinator on Redis with its web console on another free loopback port. */
export interface TestConsole {
  coord: TestCoordinator;
  handler: ConsoleHttpHandler;
  /** http://127.0.0.1:PORT */
  url: string;
  stop(): Promise<void>;
}

/** Starts a coordinator on `redisUrl` and its console with `access` (default: the test tokens). */
export async function startConsole(
  redisUrl: string,
  options: { access?: ConsoleAccess; limits?: Partial<ConsoleLimits> } = {},
): Promise<TestConsole> {
  const coord = await startCoordinator(redisUrl);
  const { store, watches, admin, validator, limits } = coord.coordinator;
  const handler = new ConsoleHttpHandler({
    store,
    watches,
    admin,
    validator,
    limits,
    access: options.access ?? consoleTestAccess(),
    log: pino({ level: process.env.TEST_LOG ?? "silent" }),
    loopbackOnly: true,
    console: options.limits,
  });
  const server = new ConsoleHttpServer(handler.handle);
  const port = await server.start("127.0.0.1", 0);
  return {
    coord,
    handler,
    url: `http://127.0.0.1:${port}`,
    async stop() {
      await server.stop();
      await coord.stop();
    },
  };
}
