import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pino } from "pino";
import { Coordinator } from "../../server/coordinator.js";
import type { FencingSigner } from "../../server/security/fencing/fencing-signer.js";
import { Security } from "../../server/security/security.js";
import { hashToken } from "../../server/security/token-file.js";
import { MemoryStore } from "../../server/store/memory/memory-store.js";
import { RedisStore } from "../../server/store/redis/redis-store.js";
import { type CertFiles, TestPki } from "./test-pki.js";

/** How a secure test coordinator is set up: mTLS or server-only TLS, tokens by identity, a policy. */
export interface SecureSetup {
  /** Require client certificates from `pki` (default true). */
  mtls?: boolean;
  /** Bearer tokens by identity, written hashed into a token file. */
  tokens?: Record<string, string>;
  /** The policy file's JSON; absent: no authorization. */
  policy?: object;
  /** Redis URL; absent: the embedded store. */
  redisUrl?: string;
  /** Signs fencing proofs into grants. */
  fencing?: FencingSigner;
}

/** A coordinator over TLS with its PKI and files, in a temporary directory removed by `stop`. */
export interface SecureCoordinator {
  address: string;
  coordinator: Coordinator;
  security: Security;
  pki: TestPki;
  dir: string;
  server: CertFiles;
  policyFile: string;
  stop(): Promise<void>;
}

/** Starts a coordinator on 127.0.0.1:0 over TLS (mTLS by default) with the tokens and policy of `setup`. */
export async function startSecureCoordinator(setup: SecureSetup = {}): Promise<SecureCoordinator> {
  const dir = mkdtempSync(join(tmpdir(), "turnstile-security-"));
  const pki = new TestPki(dir);
  const server = pki.server();
  const tokenFile = join(dir, "tokens");
  const policyFile = join(dir, "policy.json");
  if (setup.tokens) {
    const lines = Object.entries(setup.tokens).map(([identity, token]) => `${identity} ${hashToken(token)}`);
    writeFileSync(tokenFile, `# identity sha256(token)\n${lines.join("\n")}\n`);
  }
  if (setup.policy) writeFileSync(policyFile, JSON.stringify(setup.policy));
  const log = pino({ level: process.env.TEST_LOG ?? "silent" });
  const security = Security.load(
    {
      tls: { ...server, clientCa: setup.mtls === false ? undefined : pki.ca },
      tokenFile: setup.tokens ? tokenFile : undefined,
      policyFile: setup.policy ? policyFile : undefined,
    },
    log,
  );
  const coordinator = new Coordinator({
    store: setup.redisUrl ? new RedisStore({ url: setup.redisUrl }) : new MemoryStore(),
    log,
    listen: "127.0.0.1:0",
    shutdownGraceMs: 500,
    security,
    fencing: setup.fencing,
  });
  const port = await coordinator.start();
  return {
    address: `127.0.0.1:${port}`,
    coordinator,
    security,
    pki,
    dir,
    server,
    policyFile,
    async stop() {
      await coordinator.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
