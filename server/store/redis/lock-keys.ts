/**
 * Redis keys of one lock, in the order the scripts take them. Every key carries the escaped name
 * as its hash tag, so one lock lives in one Cluster slot; escaping `%`, `{` and `}` means no name
 * can end the tag early, move to another slot or collide with another name's keys.
 */
export function lockKeys(prefix: string, name: string): [string, string, string, string, string] {
  const tag = `${prefix}:{${escapeName(name)}}`;
  return [`${tag}:holders`, `${tag}:data`, `${tag}:queue`, `${tag}:leases`, `${tag}:fence`];
}

/** Percent-escapes the three characters that matter to hash tags and to the escaping itself. */
export function escapeName(name: string): string {
  return name.replace(/[%{}]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

/** The channel on which other coordinators publish grants for this coordinator's waiters. */
export function grantChannel(prefix: string, coordinatorId: string): string {
  return `${prefix}:grants:${coordinatorId}`;
}
