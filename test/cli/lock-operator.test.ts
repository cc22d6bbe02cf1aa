import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "chai";
import { serverAddress } from "../../cli/flags/server-address.js";
import { runTurnstile, spawnTurnstile, type TurnstileProcess } from "../harness/run-turnstile.js";
import { TestPki } from "../harness/test-pki.js";
import { waitForOutput } from "../harness/wait-for-output.js";

// The CLI as an operator meets it: values the coordinator would refuse are usage errors naming the
// flag and the limit (exit 2), a waiting lock says behind whom, a refusal names the holder, files are
// named with what is wrong. Real `turnstile serve` processes on the embedded store.
const holdUntil = (file: string) => ["sh", "-c", `echo holding; while [ ! -e ${file} ]; do sleep 0.05; done`];

/** Starts `turnstile serve` on a free loopback port with `args`; resolves with it and its address. */
async function serve(args: string[] = []): Promise<{ process: TurnstileProcess; address: string }> {
  const process = spawnTurnstile(["serve", "--listen", "127.0.0.1:0", ...args], { timeoutMs: 300_000 });
  const [, port] = await waitForOutput(process.child, /"port":(\d+)[^\n]*"msg":"listening"/, 30_000);
  return { process, address: `127.0.0.1:${port}` };
}

async function stop(coordinator: { process: TurnstileProcess } | undefined): Promise<void> {
  if (!coordinator) return;
  coordinator.process.child.kill("SIGTERM");
  await coordinator.process.done;
}

describe("turnstile lock for operators (processes)", () => {
  let coordinator: Awaited<ReturnType<typeof serve>>;
  let dir: string;
  let env: Record<string, string>;

  before(async () => {
    coordinator = await serve();
    env = { TURNSTILE_SERVER: coordinator.address };
    dir = mkdtempSync(join(tmpdir(), "turnstile-lock-operator-"));
  });
  after(async () => {
    await stop(coordinator);
    rmSync(dir, { recursive: true, force: true });
  });

  it("refuses every value the coordinator refuses with exit 2 and one line naming the flag and the limit", async function () {
    this.timeout(120_000);
    const long = "n".repeat(300);
    const refused = `(refused by ${coordinator.address})`;
    const cases: [string[], string][] = [
      [["--ttl", "100ms", "x"], `--ttl: 100 ms is outside the allowed range 1000..3600000 ms ${refused}`],
      [["--ttl", "2h", "x"], `--ttl: 7200000 ms is outside the allowed range 1000..3600000 ms ${refused}`],
      [["--ttl", "0", "x"], '--ttl "0" is out of range: must be 1ms..2147483647ms (the session lease)'],
      [
        ["--wait", "2d", "x"],
        `--wait: 172800000 ms exceeds the maximum of 86400000 ms (omit it to wait forever) ${refused}`,
      ],
      [
        ["--wait", "2d", "x", "y"],
        `--wait: 172800000 ms exceeds the maximum of 86400000 ms (omit it to wait forever) ${refused}`,
      ],
      [["--lock-delay", "61s", "x"], '--lock-delay "61s" is out of range: must be 0..1m'],
      [[""], "NAME must not be empty"],
      [[long], `NAME: 300 bytes exceeds the maximum of 256 bytes ${refused}`],
      [["x", long], `NAME: 300 bytes exceeds the maximum of 256 bytes ${refused}`],
      [["a\tb"], 'NAME "a\\tb" must not contain control characters'],
    ];
    for (const [args, message] of cases) {
      const run = await runTurnstile(["lock", ...args, "--", "true"], { env, timeoutMs: 30_000 });
      expect(run.code, args.join(" ")).to.equal(2);
      expect(run.stderr.trimEnd().split("\n"), args.join(" ")).to.have.length(1);
      expect(run.stderr, args.join(" ")).to.include(`turnstile lock: ${message}`);
      // A long name is never echoed at length.
      expect(run.stderr).not.to.include("n".repeat(41));
    }
    // The operator commands leave the name's length to the coordinator too: a refused request (69).
    const describe = await runTurnstile(["describe", long], { env, timeoutMs: 30_000 });
    expect([describe.code, describe.stderr.includes("300 bytes exceeds the maximum of 256 bytes")]).to.deep.equal([
      69,
      true,
    ]);
    expect(describe.stderr).not.to.include("n".repeat(41));
    const badSession = await runTurnstile(["revoke", "x", "not-hex/owner"], { env, timeoutMs: 30_000 });
    expect([badSession.code, badSession.stderr]).to.deep.equal([
      2,
      `turnstile revoke: HOLDER's SESSION_ID must be 32 lowercase hex digits (as describe shows it), got "not-hex" (see turnstile revoke --help)\n`,
    ]);
    const longOwner = await runTurnstile(["revoke", "x", `${"a".repeat(32)}/${"o".repeat(129)}`], {
      env,
      timeoutMs: 30_000,
    });
    expect([longOwner.code, longOwner.stderr.includes("OWNER is 129 bytes: the maximum is 128 bytes")]).to.deep.equal([
      2,
      true,
    ]);
  });

  it("says once on stderr that it waits and behind whom, then runs the command when the holder lets go", async () => {
    const release = join(dir, "release-wait");
    const holder = spawnTurnstile(["lock", "ops/wait", "--", ...holdUntil(release)], { env });
    await waitForOutput(holder.child, /holding/, 30_000);
    const waiter = spawnTurnstile(["lock", "ops/wait", "--", "echo", "got it"], { env, timeoutMs: 60_000 });
    const quiet = spawnTurnstile(["lock", "--quiet", "ops/wait", "--", "true"], { env, timeoutMs: 60_000 });
    await waitForOutput(waiter.child, /waiting for/, 30_000);
    writeFileSync(release, "");
    const [held, waited, quieted] = await Promise.all([holder.done, waiter.done, quiet.done]);
    expect([held.code, waited.code, waited.stdout, quieted.code]).to.deep.equal([0, 0, "got it\n", 0]);
    const lines = waited.stderr.trimEnd().split("\n");
    expect(lines).to.have.length(1);
    expect(lines[0]).to.match(
      /^turnstile lock: waiting for "ops\/wait" \(no time limit, queue position [12]\): held by [0-9a-f]{32}\/[0-9a-f-]{36} \(client turnstile-lock@/,
    );
    expect(quieted.stderr).to.equal("");
  });

  it("turns a limit of this coordinator (serve --min-ttl 5s) into a usage error naming --ttl", async () => {
    const strict = await serve(["--min-ttl", "5s"]);
    try {
      const run = await runTurnstile(["lock", "--server", strict.address, "--ttl", "2s", "x", "--", "true"]);
      expect(run.code).to.equal(2);
      expect(run.stderr).to.match(/^turnstile lock: --ttl: 2000 ms is outside the allowed range 5000\.\.3600000 ms/);
    } finally {
      await stop(strict);
    }
  });

  it("leaves the limits a coordinator may raise to it: serve --max-ttl 2h --max-wait 2d --max-name-bytes 512 takes --ttl 90m, --wait 36h and a 300-byte NAME", async function () {
    this.timeout(120_000);
    const raised = await serve(["--max-ttl", "2h", "--max-wait", "2d", "--max-name-bytes", "512"]);
    try {
      const server = ["--server", raised.address];
      const long = "n".repeat(300);
      const cases = [
        ["--ttl", "90m", "ops/ttl"],
        ["--wait", "36h", "ops/wait"],
        [long],
        ["--wait", "36h", "ops/set", long],
      ];
      for (const args of cases) {
        const run = await runTurnstile(["lock", ...server, ...args, "--", "sh", "-c", "echo held"], {
          timeoutMs: 30_000,
        });
        expect([run.code, run.stdout, run.stderr], args.join(" ").slice(0, 60)).to.deep.equal([0, "held\n", ""]);
      }
      const describe = await runTurnstile(["describe", ...server, long], { timeoutMs: 30_000 });
      expect([describe.code, describe.stderr]).to.deep.equal([0, ""]);
    } finally {
      await stop(raised);
    }
  });

  it("names the file and what is wrong when --tls-ca is a key or not a CA, or --tls-cert and --tls-key do not match", async () => {
    const pki = new TestPki(dir);
    const leaf = pki.server("leaf");
    const other = pki.leaf("other", { cn: "other" });
    const cases: [string[], string][] = [
      [["--tls-ca", leaf.key], `--tls-ca ${leaf.key}: holds a private key, not a CA certificate`],
      [["--tls-ca", leaf.cert], `--tls-ca ${leaf.cert}: "CN=127.0.0.1" is not a CA certificate`],
      [["--tls-ca", join(dir, "missing.pem")], `--tls-ca ${join(dir, "missing.pem")}: cannot read it (ENOENT)`],
      [
        ["--tls-ca", pki.ca, "--tls-cert", leaf.cert, "--tls-key", other.key],
        "the private key does not belong to the certificate",
      ],
      [["--tls-ca", pki.ca, "--tls-cert", leaf.key, "--tls-key", leaf.key], "holds a private key, not a certificate"],
    ];
    for (const [args, message] of cases) {
      const run = await runTurnstile(["ls", ...args], { env, timeoutMs: 30_000 });
      expect(run.code, args.join(" ")).to.equal(2);
      expect(run.stderr, args.join(" ")).to.include(message);
    }
  });

  it("exits 3 at serve start when the port is in use, saying on stderr what to do", async () => {
    const port = coordinator.address.split(":")[1];
    const run = await runTurnstile(["serve", "--listen", `127.0.0.1:${port}`]);
    expect(run.code).to.equal(3);
    expect(run.stderr).to.equal(
      `turnstile serve: cannot listen on 127.0.0.1:${port} (gRPC): address already in use: another process listens there (a coordinator still running or draining?): stop it, or give --listen another port\n`,
    );
  });
});

describe("--server HOST without a port", () => {
  it("means port 7420 (not gRPC's 443), from the flag or TURNSTILE_SERVER; a bad address names its source", () => {
    expect(serverAddress("locks.internal", {})).to.deep.equal({ server: "locks.internal:7420" });
    expect(serverAddress(undefined, { TURNSTILE_SERVER: "127.0.0.1" })).to.deep.equal({ server: "127.0.0.1:7420" });
    expect(serverAddress("[::1]", {})).to.deep.equal({ server: "[::1]:7420" });
    expect(serverAddress("10.0.0.7:9000", {})).to.deep.equal({ server: "10.0.0.7:9000" });
    expect(serverAddress(undefined, {})).to.deep.equal({ server: "127.0.0.1:7420" });
    expect(serverAddress(undefined, { TURNSTILE_SERVER: "a b" })).to.match(/^env TURNSTILE_SERVER must be HOST/);
    expect(serverAddress("h:70000", {})).to.equal('--server: port 70000 is outside 1..65535 in "h:70000"');
  });
});
