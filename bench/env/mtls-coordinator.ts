import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TlsOptions } from "../../client/index.js";
import { pemOf, TestPki } from "../../test/harness/test-pki.js";
import { type BenchCoordinator, startCoordinator } from "./coordinator-process.js";

/**
 * A coordinator on `redisUrl` serving mTLS, with a CA, its server certificate and one client
 * certificate made by openssl in a temporary directory (removed by `stop`); resolves with it and the
 * client's TLS options.
 */
export async function startMtlsCoordinator(
  redisUrl: string,
): Promise<{ coordinator: BenchCoordinator; tls: TlsOptions }> {
  const dir = mkdtempSync(join(tmpdir(), "turnstile-bench-tls-"));
  const pki = new TestPki(dir);
  const server = pki.server();
  const client = pki.leaf("bench-client", { cn: "bench", san: ["URI:spiffe://bench/client"] });
  const args = ["--tls-cert", server.cert, "--tls-key", server.key, "--tls-client-ca", pki.ca];
  const coordinator = await startCoordinator(redisUrl, undefined, args);
  const stop = coordinator.stop.bind(coordinator);
  coordinator.stop = async () => {
    await stop();
    rmSync(dir, { recursive: true, force: true });
  };
  return { coordinator, tls: { ca: pki.caPem, ...pemOf(client) } };
}
