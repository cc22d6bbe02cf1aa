import { readFileSync } from "node:fs";
import { cpus, loadavg, release, totalmem } from "node:os";
import type { Redis } from "ioredis";
import { packageVersion } from "./package-version.js";

/** The machine and software a run measured, for the report header. */
export interface MachineInfo {
  date: string;
  cpuModel: string;
  cores: number;
  memoryGiB: number;
  os: string;
  kernel: string;
  /** 1-minute load average at the start and the end of the run (other work on the machine). */
  loadStart: number;
  loadEnd?: number;
  versions: Record<string, string>;
}

/** Collects machine facts and versions (Redis's from INFO, etcd's when present). */
export async function machineInfo(redis: Redis, etcdVersion: string | undefined): Promise<MachineInfo> {
  const info = await redis.info("server");
  let os = "unknown";
  try {
    os = readFileSync("/etc/os-release", "utf8").match(/^PRETTY_NAME="?([^"\n]+)"?/m)?.[1] ?? os;
  } catch {}
  const repo = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8"));
  return {
    date: new Date().toISOString().replace(/\.\d+Z$/, "Z"),
    cpuModel: cpus()[0]?.model ?? "unknown",
    cores: cpus().length,
    memoryGiB: Math.round(totalmem() / 2 ** 30),
    os,
    kernel: release(),
    loadStart: loadavg()[0],
    versions: {
      node: process.version,
      "redis-server": info.match(/^redis_version:(\S+)/m)?.[1] ?? "?",
      etcd: etcdVersion ?? "not installed",
      [repo.name]: repo.version,
      "@grpc/grpc-js": packageVersion("@grpc/grpc-js"),
      ioredis: packageVersion("ioredis"),
      "redis-semaphore": packageVersion("redis-semaphore"),
      "@sesamecare-oss/redlock": packageVersion("@sesamecare-oss/redlock"),
    },
  };
}
