import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { joinNegativeValues } from "../../wire/negative-values.js";
import { type Parsed, parseSettingValue, type SettingValue } from "./setting-value.js";
import { SETTINGS, type Setting } from "./settings.js";

/** Every setting's value (absent: unset) and where it came from, or one line per problem found. */
export type LoadedSettings =
  | { ok: true; values: Map<string, SettingValue>; sources: Map<string, string> }
  | { ok: false; errors: string[] };

/** Where the settings are read from: the command line after `serve`, and the environment. */
export interface SettingSources {
  argv: string[];
  env: Record<string, string | undefined>;
}

/**
 * Reads every setting with the precedence flag > env var > config file > default, and parses each
 * value by its kind. Every unknown flag or file key and every bad value is one error line naming
 * the setting, the value and where it came from; all of them are collected, not just the first.
 */
export function loadSettings({ argv, env }: SettingSources): LoadedSettings {
  const errors: string[] = [];
  let flags: Record<string, string | boolean | (string | boolean)[] | undefined>;
  try {
    const options = Object.fromEntries(
      SETTINGS.map((s) => [
        s.key,
        { type: s.kind === "boolean" ? ("boolean" as const) : ("string" as const), multiple: s.kind === "path-list" },
      ]),
    );
    const strings = SETTINGS.filter((s) => s.kind !== "boolean").map((s) => s.key);
    const parsed = parseArgs({ args: joinNegativeValues(argv, strings), options });
    flags = parsed.values;
  } catch (err) {
    return { ok: false, errors: [`${(err as Error).message.split(". ")[0]} (see turnstile serve --help)`] };
  }
  const fromEnv = (s: Setting) => (env[s.env] === "" ? undefined : env[s.env]);
  const configPath = (flags.config as string | undefined) ?? env.TURNSTILE_CONFIG;
  const file = configPath ? readConfigFile(configPath, errors) : {};

  const values = new Map<string, SettingValue>();
  const sources = new Map<string, string>();
  for (const s of SETTINGS) {
    const candidates: [unknown, string][] = [
      [flags[s.key], `flag --${s.key}`],
      [fromEnv(s), `env ${s.env}`],
      [file[s.key], `config file ${configPath}`],
      [s.default, "default"],
    ];
    const [raw, source] = candidates.find(([v]) => v !== undefined) ?? [undefined, ""];
    if (raw === undefined) continue;
    const parsed: Parsed = parseSettingValue(s.kind, raw, s);
    if ("error" in parsed) errors.push(`${s.key}: ${JSON.stringify(raw)} from ${source} ${parsed.error}`);
    else {
      values.set(s.key, parsed.value);
      sources.set(s.key, source);
    }
  }
  return errors.length > 0 ? { ok: false, errors } : { ok: true, values, sources };
}

function readConfigFile(path: string, errors: string[]): Record<string, unknown> {
  let content: unknown;
  try {
    content = JSON.parse(readFileSync(path, "utf8"));
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    errors.push(`config: cannot read ${path}: ${e.code ? `${e.code} (${e.syscall})` : `not JSON: ${e.message}`}`);
    return {};
  }
  if (typeof content !== "object" || content === null || Array.isArray(content)) {
    errors.push(
      `config: ${path} must hold a JSON object of settings keyed by flag name, e.g. {"listen": "0.0.0.0:7420"}`,
    );
    return {};
  }
  const known = new Set(SETTINGS.map((s) => s.key).filter((k) => k !== "config"));
  for (const key of Object.keys(content))
    if (!known.has(key))
      errors.push(
        `config: ${path} has the unknown setting "${key}" (keys are flag names without the leading --, e.g. "max-ttl")`,
      );
  return content as Record<string, unknown>;
}
