import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { delimiter, join } from "node:path";
import { fileURLToPath } from "node:url";

const PROJECT_BIN = fileURLToPath(new URL("../../.tools/bin/grpcurl", import.meta.url));

/** Where grpcurl is: .tools/bin (scripts/install-grpcurl.sh puts it there) or PATH; undefined if nowhere. */
export function findGrpcurl(): string | undefined {
  if (existsSync(PROJECT_BIN)) return PROJECT_BIN;
  for (const dir of (process.env.PATH ?? "").split(delimiter)) {
    const candidate = join(dir, "grpcurl");
    if (dir && existsSync(candidate)) return candidate;
  }
  return undefined;
}

/** True in CI (CI=true) or with TURNSTILE_REQUIRE_GRPCURL=1: a missing grpcurl then fails the test. */
export function grpcurlRequired(): boolean {
  return process.env.CI === "true" || process.env.TURNSTILE_REQUIRE_GRPCURL === "1";
}

/** The outcome of one grpcurl run. */
export interface GrpcurlRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `grpcurl -plaintext ...args` and resolves with its exit code and output (never rejects on exit code). */
export function grpcurl(binary: string, args: string[]): Promise<GrpcurlRun> {
  return new Promise((resolve, reject) => {
    execFile(binary, ["-plaintext", ...args], { timeout: 15_000 }, (err, stdout, stderr) => {
      if (err && typeof err.code !== "number") reject(err);
      else resolve({ code: err ? Number(err.code) : 0, stdout, stderr });
    });
  });
}
