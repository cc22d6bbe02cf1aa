import { readdir, readFile, readlink } from "node:fs/promises";

/**
 * Which of `pids` holds each of the loopback TCP sockets bound to `localPorts` and connected to
 * `remotePort` (all on 127.0.0.1): read from /proc/net/tcp (each socket's inode) and /proc/<pid>/fd
 * (who holds it), once for all. Linux only, and only processes of this user. A port none of `pids`
 * holds (or whose socket closed meanwhile) is missing from the answer.
 */
export async function socketOwners(
  localPorts: Iterable<number>,
  remotePort: number,
  pids: Iterable<number>,
): Promise<Map<number, number>> {
  const owners = new Map<number, number>();
  const hex = (port: number) => `0100007F:${port.toString(16).toUpperCase().padStart(4, "0")}`;
  const wanted = new Map([...localPorts].map((port) => [hex(port), port]));
  if (wanted.size === 0) return owners;
  const remote = hex(remotePort);
  const byInode = new Map<string, number>();
  for (const line of (await readFile("/proc/net/tcp", "utf8")).split("\n").slice(1)) {
    const f = line.trim().split(/\s+/);
    const port = wanted.get(f[1]);
    if (port !== undefined && f[2] === remote && f[9] !== "0") byInode.set(`socket:[${f[9]}]`, port);
  }
  for (const pid of pids) {
    if (byInode.size === 0) break;
    const dir = `/proc/${pid}/fd`;
    for (const fd of await readdir(dir).catch(() => [] as string[])) {
      const target = await readlink(`${dir}/${fd}`).catch(() => "");
      const port = byInode.get(target);
      if (port === undefined) continue;
      owners.set(port, pid);
      byInode.delete(target);
    }
  }
  return owners;
}
