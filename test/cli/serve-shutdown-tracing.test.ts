import { createServer, type Server, type Socket } from "node:net";
import { expect } from "chai";
import { TurnstileClient } from "../../client/index.js";
import { freePort } from "../harness/free-port.js";
import { spawnTurnstile } from "../harness/run-turnstile.js";
import { waitForOutput } from "../harness/wait-for-output.js";

// docs/operations.md ("Shutdown bound"): SIGTERM ends `turnstile serve` with exit 0 within the
// shutdown grace (5 s) plus 2 s whatever the OTLP collector does; spans get 1 s to be exported (the
// flush gives up at 1.5 s) and an export failure is one warning "tracing: spans not exported". Real processes, real sockets. (An
// unusable collector used to take 9-10 s and exit 1; on an idle machine this takes well under 2 s.)
const SHUTDOWN_BOUND_MS = 5000 + 2000;

interface Stopped {
  code: number;
  msSinceSigterm: number;
  log: { msg: string; problem?: string; level: number }[];
  stderr: string;
}

/** Serves with `--otlp-endpoint endpoint`, makes spans with one acquire, then SIGTERMs and waits. */
async function serveTraceAndStop(endpoint: string): Promise<Stopped> {
  const serve = spawnTurnstile(["serve", "--listen", "127.0.0.1:0", "--otlp-endpoint", endpoint], {
    timeoutMs: 60_000,
  });
  try {
    const [, port] = await waitForOutput(serve.child, /"port":(\d+)[^\n]*"msg":"listening"/, 30_000);
    const client = new TurnstileClient(`127.0.0.1:${port}`);
    const lock = await client.acquire("shutdown/traced");
    await lock.release();
    await client.close();
    const exited = new Promise<number>((resolve) => serve.child.once("exit", () => resolve(performance.now())));
    const sent = performance.now();
    serve.child.kill("SIGTERM");
    const at = await exited;
    console.log(`      SIGTERM to exit: ${Math.round(at - sent)} ms`);
    const run = await serve.done;
    const log = run.stdout
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line));
    return { code: run.code, msSinceSigterm: at - sent, log, stderr: run.stderr };
  } finally {
    serve.child.kill("SIGKILL");
  }
}

function tracingWarnings(stopped: Stopped) {
  return stopped.log.filter((line) => line.msg === "tracing: spans not exported");
}

describe("turnstile serve shutdown with an unusable trace collector (processes)", () => {
  it(`exits 0 within ${SHUTDOWN_BOUND_MS} ms of SIGTERM when the OTLP endpoint's port is closed, warning once`, async () => {
    const closed = await freePort();
    const stopped = await serveTraceAndStop(`http://127.0.0.1:${closed}`);
    expect(stopped.code, stopped.stderr).to.equal(0);
    expect(stopped.stderr).to.equal("");
    expect(stopped.msSinceSigterm).to.be.below(SHUTDOWN_BOUND_MS);
    const warnings = tracingWarnings(stopped);
    expect(warnings, JSON.stringify(stopped.log)).to.have.length(1);
    expect(warnings[0]).to.include({ level: 40 });
    expect(warnings[0].problem).to.match(/ECONNREFUSED/);
  });

  it(`exits 0 within ${SHUTDOWN_BOUND_MS} ms of SIGTERM when the collector accepts and never answers`, async () => {
    const sockets = new Set<Socket>();
    const silent: Server = createServer((socket) => {
      sockets.add(socket);
      socket.on("error", () => {});
    });
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
    try {
      const { port } = silent.address() as { port: number };
      const stopped = await serveTraceAndStop(`http://127.0.0.1:${port}`);
      expect(stopped.code, stopped.stderr).to.equal(0);
      expect(stopped.stderr).to.equal("");
      expect(stopped.msSinceSigterm).to.be.below(SHUTDOWN_BOUND_MS);
      expect(tracingWarnings(stopped), JSON.stringify(stopped.log)).to.have.length(1);
      expect(sockets.size, "the coordinator reached the silent collector").to.be.above(0);
    } finally {
      for (const socket of sockets) socket.destroy();
      silent.close();
    }
  });
});
