import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "./free-port.js";
import { waitForOutput } from "./wait-for-output.js";

/** A postgres server child process on a free loopback port, with its own data directory. */
export interface TestPostgres {
  /** postgres://turnstile@127.0.0.1:PORT/postgres (trust authentication, loopback only). */
  url: string;
  port: number;
  process: ChildProcess;
  /** Stops the server (SIGTERM, a fast shutdown) and deletes its data directory. */
  stop(): Promise<void>;
}

/** The bin directory of the newest PostgreSQL under /usr/lib/postgresql (Debian's layout), or undefined. */
export function postgresBin(): string | undefined {
  const root = "/usr/lib/postgresql";
  if (!existsSync(root)) return undefined;
  const versions = readdirSync(root)
    .filter((v) => existsSync(join(root, v, "bin", "postgres")))
    .sort((a, b) => Number(b) - Number(a));
  return versions.length > 0 ? join(root, versions[0], "bin") : undefined;
}

/**
 * Starts a fresh postgres (initdb, then postgres) on a free port. postgres refuses to run as root,
 * so as root both run as the `postgres` user (Debian's package creates it), else as `nobody`.
 */
export async function startPostgres(): Promise<TestPostgres> {
  const bin = postgresBin();
  if (!bin)
    throw new Error("no PostgreSQL under /usr/lib/postgresql/*/bin: install Debian's postgresql (.ci/run does)");
  const dir = mkdtempSync(join(tmpdir(), "turnstile-pg-"));
  const user = process.getuid?.() === 0 ? (idsOf("postgres") ?? idsOf("nobody")) : undefined;
  if (user) chownSync(dir, user.uid, user.gid);
  const as = user ? { uid: user.uid, gid: user.gid } : {};
  const data = join(dir, "data");
  const init = spawnSync(
    join(bin, "initdb"),
    ["-D", data, "-U", "turnstile", "--auth=trust", "-E", "UTF8", "--no-sync"],
    {
      ...as,
      encoding: "utf8",
    },
  );
  if (init.status !== 0) throw new Error(`initdb failed (${init.status}): ${init.stderr}`);
  const port = await freePort();
  const args = ["-D", data, "-p", String(port), "-k", dir, "-c", "listen_addresses=127.0.0.1", "-F"];
  const child = spawn(join(bin, "postgres"), args, { ...as, stdio: ["ignore", "pipe", "pipe"] });
  await waitForOutput(child, /database system is ready to accept connections/, 30_000);
  return {
    url: `postgres://turnstile@127.0.0.1:${port}/postgres`,
    port,
    process: child,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((resolve) => child.once("exit", resolve));
        child.kill("SIGINT");
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

function idsOf(name: string): { uid: number; gid: number } | undefined {
  const uid = spawnSync("id", ["-u", name], { encoding: "utf8" });
  const gid = spawnSync("id", ["-g", name], { encoding: "utf8" });
  if (uid.status !== 0 || gid.status !== 0) return undefined;
  return { uid: Number(uid.stdout.trim()), gid: Number(gid.stdout.trim()) };
}
