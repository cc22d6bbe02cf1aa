import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type ChannelCredentials, credentials } from "@grpc/grpc-js";
import { expect } from "chai";
import { type DescribeResponse, LockServiceClient } from "../../gen/ts/turnstile/v1/turnstile.js";
import { Coordinator } from "../../server/coordinator.js";
import { Security } from "../../server/security/security.js";
import { MemoryStore } from "../../server/store/memory/memory-store.js";
import { captureLog } from "../harness/log-capture.js";
import { clientCredentials, TestPki } from "../harness/test-pki.js";
import { failureOf, unary } from "../harness/unary.js";
import { until } from "../harness/until.js";

const describeVia = (creds: ChannelCredentials, address: string) => {
  const rpc = new LockServiceClient(address, creds);
  return unary<{ name: string }, DescribeResponse>(rpc.describe.bind(rpc), { name: "a" }).finally(() => rpc.close());
};

// A client on the wrong transport sees only OpenSSL's "wrong version number" or "Failed to connect";
// the coordinator's log says what happened and what to change (issue 32).
describe("a client on the wrong transport is named in the coordinator's log", () => {
  let dir: string;
  let pki: TestPki;
  const stops: (() => Promise<void>)[] = [];

  before(() => {
    dir = mkdtempSync(join(tmpdir(), "turnstile-mismatch-"));
    pki = new TestPki(dir);
  });
  after(async () => {
    for (const stop of stops) await stop();
    rmSync(dir, { recursive: true, force: true });
  });

  async function start(tls: boolean) {
    const { log, lines } = captureLog("warn");
    const security = tls ? Security.load({ tls: pki.server() }, log) : undefined;
    const coordinator = new Coordinator({
      store: new MemoryStore(),
      log,
      listen: "127.0.0.1:0",
      shutdownGraceMs: 200,
      security,
    });
    const address = `127.0.0.1:${await coordinator.start()}`;
    stops.push(() => coordinator.stop());
    return { address, lines };
  }

  it("warns of a TLS client on a plaintext port, naming the peer and what to change", async () => {
    const { address, lines } = await start(false);
    await failureOf(describeVia(clientCredentials(pki.ca), address));
    await until(() => lines.some((l) => l.level === 40), "the warning");
    const line = lines.find((l) => l.level === 40);
    expect(line?.msg).to.match(
      /^a client sent TLS to this plaintext port .*: connect without TLS, or serve with --tls-cert/,
    );
    expect(line?.peer).to.match(/127\.0\.0\.1$/);
  });

  it("warns of a plaintext client on a TLS port, naming the peer and what to change", async () => {
    const { address, lines } = await start(true);
    await failureOf(describeVia(credentials.createInsecure(), address));
    await until(() => lines.some((l) => l.level === 40), "the warning");
    const line = lines.find((l) => l.level === 40);
    expect(line?.msg).to.match(/^a client sent plaintext to this TLS port .*--tls-ca/);
    expect(line?.peer).to.match(/127\.0\.0\.1$/);
  });
});
