// The `turnstile` command's table of subcommands. bin/turnstile.js runs its compiled copy,
// dist/bin/turnstile-cli.js; the tests run this source through tsx. Each subcommand is one module
// exporting `run(argv): Promise<number>` (the exit code) and answering its own --help. `serve` lives
// in server/cli/; the client commands live in cli/ and reach the client only through client/index.ts
// and client/admin.ts, never server code. A new subcommand is one line here and one module.
import { watchParentShell } from "./watch-parent-shell.js";

/** One subcommand: the module that runs it (relative to this file) and its line in the usage. */
interface Command {
  module: string;
  summary: string;
}

const COMMANDS: Record<string, Command> = {
  serve: { module: "../server/cli/serve-command.js", summary: "run a coordinator (the gRPC lock server)" },
  lock: { module: "../cli/lock-command.js", summary: "hold a lock while a command runs" },
  ls: { module: "../cli/ls-command.js", summary: "list the active locks by name prefix" },
  describe: { module: "../cli/describe-command.js", summary: "show a lock's holders and waiters" },
  watch: { module: "../cli/watch-command.js", summary: "stream a lock's holder changes until interrupted" },
  revoke: { module: "../cli/revoke-command.js", summary: "take a holder's hold away (operator action)" },
  "ask-release": {
    module: "../cli/ask-release-command.js",
    summary: "ask a lock's holders to let go (operator action)",
  },
  health: { module: "../cli/health-command.js", summary: "ask a coordinator's gRPC health service once" },
  keys: { module: "../cli/keys-command.js", summary: "print the coordinators' published fencing keys (JWKS)" },
};

const NAME_COLUMN = Math.max(...Object.keys(COMMANDS).map((name) => name.length)) + 2;

const USAGE = `Usage: turnstile <command> [options]

Commands:
${Object.entries(COMMANDS)
  .map(([name, c]) => `  ${name.padEnd(NAME_COLUMN)}${c.summary}`)
  .join("\n")}

Run 'turnstile <command> --help' for its options.
`;

const [name, ...argv] = process.argv.slice(2);
if (name === undefined || name === "--help" || name === "-h" || name === "help") {
  (name === undefined ? process.stderr : process.stdout).write(USAGE);
  process.exit(name === undefined ? 2 : 0);
}
const command = Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined;
if (!command) {
  process.stderr.write(`turnstile: unknown command "${name}"\n\n${USAGE}`);
  process.exit(2);
}
watchParentShell();
// grpc-js gives TLS the dialled host as server name; for an IP address Node warns (DEP0123) on every
// connection. Certificates are still verified against their IP SANs, so the CLI drops that warning.
const emitWarning = process.emitWarning;
process.emitWarning = ((warning: string | Error, ...rest: unknown[]) => {
  if (!rest.includes("DEP0123")) (emitWarning as (...a: unknown[]) => void).call(process, warning, ...rest);
}) as typeof process.emitWarning;
try {
  const { run } = (await import(command.module)) as { run(argv: string[]): Promise<number> };
  process.exit(await run(argv));
} catch (err) {
  process.stderr.write(`turnstile ${name}: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
}
