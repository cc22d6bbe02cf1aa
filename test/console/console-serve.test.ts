import { expect } from "chai";
import { spawnTurnstile } from "../harness/run-turnstile.js";
import { waitForOutput } from "../harness/wait-for-output.js";

// `turnstile serve --http`: the console on its own listener, or on the metrics listener when both
// name the same address.
describe("turnstile serve --http", () => {
  const get = async (url: string) => {
    const res = await fetch(url);
    return { status: res.status, type: res.headers.get("content-type"), body: await res.text() };
  };

  it("serves the console page and API at HOST:PORT", async () => {
    const serve = spawnTurnstile(["serve", "--listen", "127.0.0.1:0", "--http", "127.0.0.1:0"], { timeoutMs: 60_000 });
    try {
      const [, port] = await waitForOutput(
        serve.child,
        /"httpPort":(\d+)[^\n]*"msg":"serving the web console"/,
        15_000,
      );
      const page = await get(`http://127.0.0.1:${port}/`);
      expect([page.status, page.type]).to.deep.equal([200, "text/html; charset=utf-8"]);
      expect(page.body).to.include("<title>Turnstile console</title>");
      const who = await get(`http://127.0.0.1:${port}/api/whoami`);
      expect(JSON.parse(who.body)).to.deep.equal({ identity: "anonymous", authRequired: false });
    } finally {
      serve.child.kill("SIGTERM");
    }
    expect((await serve.done).code).to.equal(0);
  });

  it("shares the metrics listener when --http equals --metrics", async () => {
    const address = "127.0.0.1:0";
    const serve = spawnTurnstile(["serve", "--listen", "127.0.0.1:0", "--metrics", address, "--http", address], {
      timeoutMs: 60_000,
    });
    try {
      const shared = /"metricsPort":(\d+)[\s\S]*"sharedWithMetrics":true[^\n]*"msg":"serving the web console"/;
      const [, port] = await waitForOutput(serve.child, shared, 15_000);
      const metrics = await get(`http://127.0.0.1:${port}/metrics`);
      expect([metrics.status, metrics.body]).to.satisfy(
        ([s, b]: [number, string]) => s === 200 && b.includes("turnstile_"),
      );
      const page = await get(`http://127.0.0.1:${port}/`);
      expect([page.status, page.body.includes("console.js")]).to.deep.equal([200, true]);
    } finally {
      serve.child.kill("SIGTERM");
    }
    expect((await serve.done).code).to.equal(0);
  });
});
