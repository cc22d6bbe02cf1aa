#!/usr/bin/env node
// The `turnstile` command: runs the TypeScript sources through tsx, so no build step is needed.
// Each subcommand is one module exporting `run(argv): Promise<number>` (the exit code) and
// answering its own --help. `serve` lives in server/cli/; the client commands live in client/cli/
// and use only the client, never server code. A new subcommand is one line here and one module.
import { register } from "tsx/esm/api";

const COMMANDS = {
  serve: { module: "../server/cli/serve-command.ts", summary: "run a coordinator (the gRPC lock server)" },
  lock: { module: "../client/cli/lock-command.ts", summary: "hold a lock while a command runs" },
  ls: { module: "../client/cli/ls-command.ts", summary: "list the active locks by name prefix" },
  describe: { module: "../client/cli/describe-command.ts", summary: "show a lock's holders and waiters" },
  watch: { module: "../client/cli/watch-command.ts", summary: "stream a lock's holder changes until interrupted" },
  revoke: { module: "../client/cli/revoke-command.ts", summary: "take a holder's hold away (operator action)" },
};

const USAGE = `Usage: turnstile <command> [options]

Commands:
${Object.entries(COMMANDS)
  .map(([name, c]) => `  ${name.padEnd(10)}${c.summary}`)
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
register();
// grpc-js gives TLS the dialled host as server name; for an IP address Node warns (DEP0123) on every
// connection. Certificates are still verified against their IP SANs, so the CLI drops that warning.
const emitWarning = process.emitWarning;
process.emitWarning = (warning, ...rest) => {
  if (!rest.includes("DEP0123")) emitWarning.call(process, warning, ...rest);
};
try {
  const { run } = await import(command.module);
  process.exit(await run(argv));
} catch (err) {
  process.stderr.write(`turnstile ${name}: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
}
