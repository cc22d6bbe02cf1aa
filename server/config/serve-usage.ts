import { MAX_TIMER_TEXT } from "../../wire/max-timer-ms.js";
import { SETTINGS, type SettingKind } from "./settings.js";

const METAVAR: Record<SettingKind, string> = {
  address: "HOST:PORT",
  "address-or-off": "HOST:PORT|off",
  "redis-url": "URL",
  "host-list": "HOST:PORT,...",
  text: "TEXT",
  level: "LEVEL",
  duration: "DURATION",
  count: "N",
  path: "FILE",
  "path-list": "FILE",
  boolean: "",
  "replica-acks": "N|majority|off",
};

/** `turnstile serve --help`: every setting with its flag, env var, default and meaning. */
export function serveUsage(): string {
  const lines = [
    "Usage: turnstile serve [options]",
    "",
    "Runs a coordinator: the gRPC LockService with health checking (grpc.health.v1) and server",
    "reflection. Each setting is a flag, an env var or a key of the --config JSON file (the flag",
    'name without the leading --, e.g. "max-ttl"); precedence: flag > env > config file > default.',
    "An empty env var counts as unset. DURATION is a number with a unit: 250ms, 15s, 5m, 1h, 30d;",
    `at most ${MAX_TIMER_TEXT}, the longest timer (--fence-retention excepted).`,
    "Bad settings: one line each on stderr, exit code 2. With none of --redis, --redis-sentinel,",
    "--redis-cluster the coordinator runs on the embedded in-process store (one coordinator; locks",
    "end with it).",
    "Without --tls-cert, --listen must be a loopback address unless --insecure is given.",
    "SIGHUP re-reads the TLS files, the token file and the policy (so does changing them).",
  ];
  for (const group of ["Server", "Security", "Redis", "Limits"]) {
    lines.push("", `${group}:`);
    for (const s of SETTINGS.filter((x) => x.group === group)) {
      const flag = `  --${s.key}${METAVAR[s.kind] ? ` ${METAVAR[s.kind]}` : ""}`;
      // A flag too long for its column gets a line of its own.
      if (flag.length >= 36) lines.push(flag, `${"".padEnd(36)}${s.help}`);
      else lines.push(`${flag.padEnd(36)}${s.help}`);
      lines.push(`${"".padEnd(36)}(env ${s.env}${s.default === undefined ? "" : `, default ${s.default}`})`);
    }
  }
  lines.push("", `${"  -h, --help".padEnd(36)}this help`, "");
  return lines.join("\n");
}
