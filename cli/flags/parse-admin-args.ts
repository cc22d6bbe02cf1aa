import { parseArgs } from "node:util";
import type { CredentialOptions } from "../../client/admin.js";
import { joinNegativeValues } from "../../wire/negative-values.js";
import { LockExit } from "../exit-codes.js";
import { CONNECTION_FLAGS, connectionOptions } from "./connection-flags.js";
import { nameProblem } from "./lock-name.js";

/** How a listing is printed: an aligned table for people, or JSON for programs. */
export type OutputFormat = "table" | "json";

/** The flags every admin command shares, its own string flags, and its positionals. */
export interface AdminArgs {
  server: string;
  /** TLS, mTLS and token options (see connection-flags.ts). */
  connection: CredentialOptions;
  output: OutputFormat;
  values: Record<string, string | undefined>;
  positionals: string[];
}

/** What an admin command accepts besides --server (and --output when `output` is set). */
export interface AdminArgsSpec {
  /** Its own string flags, by long name. */
  flags?: readonly string[];
  /** Whether it takes --output table|json. */
  output?: boolean;
  /** Positional names, in order; those ending in "?" are optional. */
  positionals: readonly string[];
}

/**
 * Parses an admin command's arguments: `--server HOST[:PORT]` (default env TURNSTILE_SERVER, then
 * 127.0.0.1:7420; port 7420 if left out), the TLS and token flags, `--output`, the command's own flags and positionals. Returns one line saying
 * what is wrong instead when they are bad.
 */
export function parseAdminArgs(argv: string[], spec: AdminArgsSpec, env: NodeJS.ProcessEnv): AdminArgs | string {
  const options: Record<string, { type: "string" }> = {};
  if (spec.output) options.output = { type: "string" };
  for (const flag of [...(spec.flags ?? []), ...CONNECTION_FLAGS]) options[flag] = { type: "string" };
  let parsed: { values: Record<string, string | boolean | undefined>; positionals: string[] };
  try {
    parsed = parseArgs({
      args: joinNegativeValues(argv, Object.keys(options)),
      options,
      allowPositionals: true,
      strict: true,
    });
  } catch (err) {
    return (err as Error).message.split(". ")[0];
  }
  const { values, positionals } = parsed;
  const required = spec.positionals.filter((p) => !p.endsWith("?"));
  if (positionals.length < required.length || positionals.length > spec.positionals.length) {
    const wanted = spec.positionals.map((p) => (p.endsWith("?") ? `[${p.slice(0, -1)}]` : p)).join(" ");
    return `expected ${wanted || "no arguments"}, got ${positionals.length} argument(s)`;
  }
  // Names the coordinator would refuse are usage errors here, naming the argument and the limit.
  for (const [i, text] of positionals.entries()) {
    const what = spec.positionals[i].replace(/\?$/, "");
    const problem =
      what === "NAME" || what === "PREFIX" ? nameProblem(what, text, { prefix: what === "PREFIX" }) : undefined;
    if (problem) return problem;
  }
  const output = (values.output as string | undefined) ?? "table";
  if (output !== "table" && output !== "json") return `--output must be table or json, got "${output}"`;
  const connected = connectionOptions(values, env);
  if (typeof connected === "string") return connected;
  const { server, connection } = connected;
  return { server, connection, output, values: values as Record<string, string | undefined>, positionals };
}

/**
 * The shared start of every admin command: answers --help (exit 0) and bad arguments (one line on
 * stderr, exit 2) itself, and otherwise returns what `parse` made of the arguments.
 */
export function argsOrExit<T extends object>(
  command: string,
  usage: string,
  argv: string[],
  parse: () => T | string,
): T | number {
  if (argv.includes("--help") || argv.includes("-h")) {
    process.stdout.write(usage);
    return 0;
  }
  const args = parse();
  if (typeof args !== "string") return args;
  process.stderr.write(`turnstile ${command}: ${args} (see turnstile ${command} --help)\n`);
  return LockExit.usage;
}
