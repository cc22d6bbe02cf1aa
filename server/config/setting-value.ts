import { parseDurationText } from "../../wire/duration-text.js";
import { MAX_TIMER_MS, MAX_TIMER_TEXT } from "../../wire/max-timer-ms.js";
import type { Setting, SettingKind } from "./settings.js";

/** A host and port, as given (IPv6 hosts without brackets). */
export interface HostPort {
  host: string;
  port: number;
}

/** A parsed setting: text, ms, counts, flags, one address or a list of them. */
export type SettingValue = string | string[] | number | boolean | HostPort | HostPort[];

/** The parsed value, or why the raw value is not one (a phrase such as "is not a duration ..."). */
export type Parsed = { value: SettingValue } | { error: string };

const LEVELS = ["trace", "debug", "info", "warn", "error", "fatal", "silent"];

/**
 * Reads one setting's raw value (text from a flag or env var; text, number, boolean or array from
 * the config file) as its kind says. A duration above the longest timer is refused unless `untimed`.
 */
export function parseSettingValue(kind: SettingKind, raw: unknown, { untimed }: Pick<Setting, "untimed"> = {}): Parsed {
  if (kind === "boolean") return parseBoolean(raw);
  if (kind === "path-list") return parsePathList(raw);
  if ((kind === "count" || kind === "replica-acks") && typeof raw === "number")
    return parseSettingValue(kind, String(raw), { untimed });
  if (kind === "host-list" && Array.isArray(raw) && raw.every((r) => typeof r === "string"))
    return parseHostList(raw.join(","));
  if (kind === "duration" && typeof raw === "number")
    return { error: 'is not a duration: write it as text with a unit, e.g. "15s"' };
  if (typeof raw !== "string") return { error: "must be a string" };
  const text = raw.trim();
  switch (kind) {
    case "address":
      return parseHostPort(text);
    case "address-or-off":
      return text === "off" ? { value: "off" } : parseHostPort(text);
    case "redis-url":
      return parseRedisUrl(text);
    case "host-list":
      return parseHostList(text);
    case "level":
      return LEVELS.includes(text) ? { value: text } : { error: `is not a log level (${LEVELS.join("|")})` };
    case "duration": {
      const ms = parseDurationText(text);
      if (ms === undefined) return { error: "is not a duration (a number with a unit ms|s|m|h|d, e.g. 15s)" };
      if (ms > MAX_TIMER_MS && !untimed)
        return { error: `exceeds the maximum of ${MAX_TIMER_TEXT}, the longest timer` };
      return { value: ms };
    }
    case "count":
      return parseCount(text);
    case "replica-acks":
      if (text === "off" || text === "majority") return { value: text };
      return "error" in parseCount(text)
        ? { error: "is not a replica count, majority or off" }
        : { value: Number(text) };
    case "path":
    case "text":
      return text === "" ? { error: "must not be empty" } : { value: text };
  }
}

/** Parses HOST:PORT ([v6]:PORT for IPv6) with a port in 0..65535. */
export function parseHostPort(text: string): Parsed {
  const match = /^(?:\[([^\]]+)\]|([^:[\]]+)):(\d{1,5})$/.exec(text);
  const port = match ? Number(match[3]) : Number.NaN;
  if (!match || port > 65535) return { error: "is not HOST:PORT (e.g. 127.0.0.1:7420; port 0..65535)" };
  return { value: { host: match[1] ?? match[2], port } };
}

/** Formats a HostPort back into HOST:PORT, bracketing IPv6 hosts. */
export function formatHostPort({ host, port }: HostPort): string {
  return host.includes(":") ? `[${host}]:${port}` : `${host}:${port}`;
}

function parseHostList(text: string): Parsed {
  const items = text.split(",").map((s) => s.trim());
  const value: HostPort[] = [];
  for (const item of items) {
    const parsed = parseHostPort(item);
    if ("error" in parsed) return { error: `is not a list HOST:PORT,HOST:PORT,... ("${item}" ${parsed.error})` };
    value.push(parsed.value as HostPort);
  }
  return { value };
}

function parseRedisUrl(text: string): Parsed {
  let url: URL | undefined;
  try {
    url = new URL(text);
  } catch {}
  if (!url || !/^rediss?:$/.test(url.protocol) || url.hostname === "")
    return { error: "is not a Redis URL (redis://[:password@]host:port[/db], or rediss:// for TLS)" };
  return { value: text };
}

function parseCount(text: string): Parsed {
  if (!/^\d+$/.test(text) || Number(text) < 1 || !Number.isSafeInteger(Number(text)))
    return { error: "is not a whole number of at least 1" };
  return { value: Number(text) };
}

/** A repeated flag (several values), a comma-separated env var, or a config file's string or array. */
function parsePathList(raw: unknown): Parsed {
  const items = Array.isArray(raw) ? raw : typeof raw === "string" ? raw.split(",") : undefined;
  if (!items?.every((i) => typeof i === "string")) return { error: "must be a file name or a list of them" };
  const value = items.map((i: string) => i.trim());
  return value.some((v) => v === "") ? { error: "has an empty file name" } : { value };
}

function parseBoolean(raw: unknown): Parsed {
  if (typeof raw === "boolean") return { value: raw };
  const text = typeof raw === "string" ? raw.trim().toLowerCase() : "";
  if (["true", "1", "yes"].includes(text)) return { value: true };
  if (["false", "0", "no"].includes(text)) return { value: false };
  return { error: "is not a boolean (true or false)" };
}
