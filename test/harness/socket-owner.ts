import { readdir, readFile, readlink } from "node:fs/promises";

/**
 * The process, among `pids`, that holds the loopback TCP socket bound to `localPort` and connected
 * to `remotePort` (both on 127.0.0.1): read from /proc/net/tcp (the socket's inode) and
 * /proc/<pid>/fd (who holds it). Linux only, and only processes of this user; undefined when none
 * of `pids` holds it (or it closed meanwhile).
 */
export async function socketOwner(
  localPort: number,
  remotePort: number,
  pids: Iterable<number>,
): Promise<number | undefined> {
  const hex = (port: number) => `0100007F:${port.toString(16).toUpperCase().padStart(4, "0")}`;
  const [local, remote] = [hex(localPort), hex(remotePort)];
  const table = await readFile("/proc/net/tcp", "utf8");
  let inode: string | undefined;
  for (const line of table.split("\n").slice(1)) {
    const f = line.trim().split(/\s+/);
    if (f[1] === local && f[2] === remote) inode = f[9];
  }
  if (!inode || inode === "0") return undefined;
  const wanted = `socket:[${inode}]`;
  for (const pid of pids) {
    const dir = `/proc/${pid}/fd`;
    const fds = await readdir(dir).catch(() => [] as string[]);
    for (const fd of fds) {
      if ((await readlink(`${dir}/${fd}`).catch(() => "")) === wanted) return pid;
    }
  }
  return undefined;
}
