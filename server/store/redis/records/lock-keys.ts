/**
 * Redis keys of one lock, in the order the scripts take them: holders, data, queue, leases, fence,
 * version. Every key carries one hash tag, so one lock lives in one Cluster slot: the name's own
 * hash tag when it has one (`{orders}/a`: `orders`, by Redis's rule, `nameHashTag`), so that names
 * sharing it share a slot, else the whole escaped name. Escaping `%`, `{` and `}` in the name means
 * no name can end the tag early, move to another slot or collide with another name's keys.
 */
export function lockKeys(prefix: string, name: string): [string, string, string, string, string, string] {
  const tag = lockTag(prefix, name);
  return [`${tag}:holders`, `${tag}:data`, `${tag}:queue`, `${tag}:leases`, `${tag}:fence`, `${tag}:version`];
}

/** Percent-escapes the three characters that matter to hash tags and to the escaping itself. */
export function escapeName(name: string): string {
  return name.replace(/[%{}]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

/** Reverses `escapeName`. */
export function unescapeName(escaped: string): string {
  return escaped.replace(/%(25|7B|7D)/g, (_m, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)));
}

/** The channel on which other coordinators publish grants for this coordinator's waiters. */
export function grantChannel(prefix: string, coordinatorId: string): string {
  return `${prefix}:grants:${coordinatorId}`;
}

/**
 * The channel on which the scripts publish one lock's holder changes. It carries the lock's hash
 * tag, so it can move to sharded pub/sub (SSUBSCRIBE) on Redis Cluster unchanged.
 */
export function eventChannel(prefix: string, name: string): string {
  return `${lockTag(prefix, name)}:events`;
}

/** The broadcast channel of revocations, which every coordinator subscribes to. */
export function revocationChannel(prefix: string): string {
  return `${prefix}:revocations`;
}

/** The broadcast channel of release requests (request-release.lua), which every coordinator subscribes to. */
export function releaseRequestChannel(prefix: string): string {
  return `${prefix}:release-requests`;
}

/**
 * The hash tag a lock name chooses for itself, by Redis's rule for keys: the text between its first
 * `{` and the first `}` after it, when that is not empty (`{orders}/a` and `{orders}/b`: `orders`).
 * Undefined for a name without one: its whole (escaped) name is the tag.
 */
export function nameHashTag(name: string): string | undefined {
  const open = name.indexOf("{");
  if (open < 0) return undefined;
  const close = name.indexOf("}", open + 1);
  return close > open + 1 ? name.slice(open + 1, close) : undefined;
}

/**
 * The name of the lock whose data key is `key` (`<prefix>:{<escaped name>}:data`, or with the name's
 * own tag `<prefix>:{<tag>}<escaped name>:data`), or undefined when `key` is no lock's data key.
 */
export function nameOfDataKey(prefix: string, key: string): string | undefined {
  const head = `${prefix}:{`;
  if (!key.startsWith(head) || !key.endsWith(":data")) return undefined;
  const middle = key.slice(head.length, -":data".length);
  // "<escaped name>}" or "<tag>}<escaped name>": an escaped name has no brace, a tag no "}".
  const close = middle.indexOf("}");
  if (close < 0) return undefined;
  const rest = middle.slice(close + 1);
  return unescapeName(rest === "" ? middle.slice(0, close) : rest);
}

// A tag is written as the name has it (it holds no "}"), so the lock's slot is CLUSTER KEYSLOT of the name itself;
// the escaped name follows it, so two names with one tag still have keys of their own.
function lockTag(prefix: string, name: string): string {
  const tag = nameHashTag(name);
  return tag === undefined ? `${prefix}:{${escapeName(name)}}` : `${prefix}:{${tag}}${escapeName(name)}`;
}
