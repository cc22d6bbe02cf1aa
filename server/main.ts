import { parseArgs } from "node:util";
import { pino } from "pino";
import { Coordinator } from "./coordinator.js";
import { MemoryStore } from "./store/memory/memory-store.js";
import { RedisStore } from "./store/redis/redis-store.js";

const USAGE = `Usage: turnstile serve [--listen HOST:PORT] [--redis URL] [--log-level LEVEL]

  --listen HOST:PORT   address to serve gRPC on (env TURNSTILE_LISTEN, default 127.0.0.1:7420)
  --redis URL          Redis to keep locks in, redis://[:password@]host:port[/db]
                       (env TURNSTILE_REDIS_URL; absent: the embedded in-process store)
  --log-level LEVEL    trace|debug|info|warn|error (env TURNSTILE_LOG_LEVEL, default info)
`;

/** Entry point of `turnstile`: parses the command line and runs the coordinator until SIGTERM/SIGINT. */
async function main(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      listen: { type: "string" },
      redis: { type: "string" },
      "log-level": { type: "string" },
      help: { type: "boolean", short: "h" },
    },
  });
  if (values.help || positionals[0] !== "serve") {
    process.stdout.write(USAGE);
    return values.help ? 0 : 2;
  }
  const listen = values.listen ?? process.env.TURNSTILE_LISTEN ?? "127.0.0.1:7420";
  const redisUrl = values.redis ?? process.env.TURNSTILE_REDIS_URL;
  const log = pino({ level: values["log-level"] ?? process.env.TURNSTILE_LOG_LEVEL ?? "info" });
  if (!redisUrl) {
    log.warn(
      "no Redis URL: using the embedded store (locks live in this process only; pass --redis for durability and more coordinators)",
    );
  }
  const store = redisUrl ? new RedisStore({ url: redisUrl }) : new MemoryStore();
  const coordinator = new Coordinator({ store, log, listen });
  await coordinator.start();
  await new Promise<void>((resolve) => {
    process.once("SIGTERM", resolve);
    process.once("SIGINT", resolve);
  });
  log.info("shutting down");
  await coordinator.stop();
  return 0;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err) => {
    process.stderr.write(`turnstile: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  },
);
