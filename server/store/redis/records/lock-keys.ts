/**
 * Redis keys of one lock, in the order the scripts take them: holders, data, queue, leases, fence,
 * version. Every key carries the escaped name as its hash tag, so one lock lives in one Cluster
 * slot; escaping `%`, `{` and `}` means no name can end the tag early, move to another slot or
 * collide with another name's keys.
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

function lockTag(prefix: string, name: string): string {
  return `${prefix}:{${escapeName(name)}}`;
}
