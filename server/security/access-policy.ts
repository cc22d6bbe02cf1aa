import { SecurityFileError } from "./reloadable-file.js";

/** What a grant allows: `lock` Acquire/Release/Proclaim, `read` Describe/Watch/List, `admin` Revoke. */
export type Right = "lock" | "read" | "admin";

const RIGHTS: readonly Right[] = ["lock", "read", "admin"];

/** One rule of the policy: these identities get these rights on these names and prefixes. */
interface Rule {
  identities: Set<string>;
  rights: Set<Right>;
  /** Each ends with "/" (names under it) or is "" (every name). */
  prefixes: string[];
  /** Exact names. */
  names: Set<string>;
}

/**
 * The authorization policy: a JSON file `{"rules": [{"identities": [...], "rights": [...],
 * "prefixes": [...], "names": [...]}]}`. Anything no rule grants is denied. A prefix must end with
 * "/" (or be "", every name), so `billing/` covers `billing/x` but never `billing-evil/x`; names are
 * compared code point by code point, without Unicode normalization. Identity "*" is any caller.
 */
export class AccessPolicy {
  private constructor(private readonly rules: Rule[]) {}

  /** Parses the policy; throws a SecurityFileError naming the rule and field that are wrong. */
  static parse(text: string, path: string): AccessPolicy {
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch (err) {
      throw new SecurityFileError(`policy ${path}: not JSON: ${(err as Error).message}`);
    }
    const rules = (json as { rules?: unknown })?.rules;
    if (!Array.isArray(rules)) throw new SecurityFileError(`policy ${path}: expected {"rules": [...]}`);
    return new AccessPolicy(rules.map((rule, i) => parseRule(rule, `policy ${path}: rules[${i}]`)));
  }

  /** True when some rule gives `identity` the `right` on `name`. */
  allows(identity: string, right: Right, name: string): boolean {
    return this.rules.some(
      (r) =>
        (r.identities.has(identity) || r.identities.has("*")) &&
        r.rights.has(right) &&
        (r.names.has(name) || r.prefixes.some((p) => name.startsWith(p))),
    );
  }
}

function parseRule(rule: unknown, where: string): Rule {
  if (typeof rule !== "object" || rule === null) throw new SecurityFileError(`${where}: must be an object`);
  const r = rule as Record<string, unknown>;
  for (const key of Object.keys(r))
    if (!["identities", "rights", "prefixes", "names"].includes(key))
      throw new SecurityFileError(`${where}: unknown field "${key}" (identities, rights, prefixes, names)`);
  const list = (key: string, required: boolean): string[] => {
    const v = r[key] ?? [];
    if (!Array.isArray(v) || !v.every((x) => typeof x === "string"))
      throw new SecurityFileError(`${where}.${key}: must be a list of strings`);
    if (required && v.length === 0) throw new SecurityFileError(`${where}.${key}: must not be empty`);
    return v;
  };
  const identities = list("identities", true);
  if (identities.includes("")) throw new SecurityFileError(`${where}.identities: "" is no identity`);
  const rights = list("rights", true);
  for (const right of rights)
    if (!RIGHTS.includes(right as Right))
      throw new SecurityFileError(`${where}.rights: "${right}" is not one of ${RIGHTS.join(", ")}`);
  const prefixes = list("prefixes", false);
  for (const p of prefixes)
    if (p !== "" && !p.endsWith("/"))
      throw new SecurityFileError(
        `${where}.prefixes: "${p}" must end with "/" (or be "" for every name); put a single lock under "names"`,
      );
  const names = list("names", false);
  if (prefixes.length === 0 && names.length === 0) throw new SecurityFileError(`${where}: needs "prefixes" or "names"`);
  return {
    identities: new Set(identities),
    rights: new Set(rights as Right[]),
    prefixes,
    names: new Set(names),
  };
}
