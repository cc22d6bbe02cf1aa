import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "chai";
import { isLoopback } from "../../server/config/security-config.js";
import { loadServeConfig } from "../../server/config/serve-config.js";

describe("loadServeConfig() security settings", () => {
  let dir: string;
  let file: string;
  const load = (argv: string[], env: Record<string, string> = {}) => loadServeConfig({ argv, env });
  const errors = (argv: string[]) => {
    const r = load(argv);
    return r.ok ? [] : r.errors;
  };

  before(() => {
    dir = mkdtempSync(join(tmpdir(), "turnstile-security-config-"));
    file = join(dir, "x.pem");
    writeFileSync(file, "");
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it("leaves security out when none is set (plaintext, open), and takes the files from flags or env", () => {
    const plain = load([]);
    expect(plain.ok && plain.config.security).to.equal(undefined);
    const r = load(["--tls-cert", file, "--tls-key", file], { TURNSTILE_TLS_CLIENT_CA: file, TURNSTILE_POLICY: file });
    expect(r.ok && r.config.security).to.deep.equal({
      tls: { cert: file, key: file, clientCa: file },
      tokenFile: undefined,
      policyFile: file,
    });
  });

  it("refuses a non-loopback listen address without TLS unless --insecure, and allows loopback ones", () => {
    expect(errors(["--listen", "0.0.0.0:7420"])).to.deep.equal([
      "listen: 0.0.0.0 is not a loopback address and there is no TLS: set --tls-cert and --tls-key, or --insecure to serve plaintext anyway",
    ]);
    expect(errors(["--listen", "0.0.0.0:7420", "--insecure"])).to.deep.equal([]);
    expect(errors(["--listen", "0.0.0.0:7420", "--tls-cert", file, "--tls-key", file])).to.deep.equal([]);
    for (const listen of ["127.0.0.1:1", "127.9.9.9:1", "localhost:1", "[::1]:1"])
      expect(errors(["--listen", listen]), listen).to.deep.equal([]);
  });

  it("names each setting that does not fit with the others", () => {
    const missing = join(dir, "missing.pem");
    expect(errors(["--tls-cert", file])).to.deep.equal([
      "tls-key: --tls-cert and --tls-key go together: set both or neither",
    ]);
    expect(errors(["--tls-client-ca", file])).to.deep.equal([
      "tls-client-ca: client certificates need TLS: set --tls-cert and --tls-key too",
    ]);
    expect(errors(["--tls-cert", file, "--tls-key", file, "--policy", file])).to.deep.equal([
      "policy: a policy needs identities: set --tls-client-ca (mTLS) or --token-file",
    ]);
    expect(errors(["--token-file", missing])).to.deep.equal([`token-file: cannot read ${missing} (ENOENT)`]);
  });

  describe("the web console (--http)", () => {
    const tls = () => ["--tls-cert", file, "--tls-key", file];
    const secured = () => [...tls(), "--token-file", file, "--policy", file];

    it("stays on loopback without security settings, even with --insecure", () => {
      const why =
        "http: 0.0.0.0 is not a loopback address and the console has no access control without security settings: set --token-file and --policy (docs/security.md), or listen on 127.0.0.1";
      expect(errors(["--http", "0.0.0.0:8080"])).to.deep.equal([why]);
      expect(errors(["--http", "0.0.0.0:8080", "--insecure"])).to.deep.equal([why]);
      expect(errors(["--http", "127.0.0.1:8080"])).to.deep.equal([]);
    });

    it("may listen anywhere with TLS and tokens, and without TLS only with --insecure", () => {
      expect(errors(["--http", "0.0.0.0:8080", ...secured()])).to.deep.equal([]);
      expect(errors(["--http", "0.0.0.0:8080", "--token-file", file, "--policy", file])).to.deep.equal([
        "http: 0.0.0.0 is not a loopback address and there is no TLS: set --tls-cert and --tls-key (the console then serves HTTPS), or --insecure to serve plaintext anyway",
      ]);
      expect(errors(["--http", "0.0.0.0:8080", "--token-file", file, "--insecure"])).to.deep.equal([]);
    });

    it("needs the token file under mTLS, and its own address when it serves HTTPS", () => {
      expect(errors(["--http", "127.0.0.1:8080", ...tls(), "--tls-client-ca", file])).to.deep.equal([
        "http: the console names its callers by bearer token only: set --token-file (certificates are for gRPC)",
      ]);
      expect(errors(["--http", "127.0.0.1:8080", "--metrics", "127.0.0.1:8080", ...secured()])).to.deep.equal([
        "http: with TLS the console serves HTTPS and metrics stay plain HTTP: give --http its own address",
      ]);
      expect(errors(["--http", "127.0.0.1:8080", "--metrics", "127.0.0.1:8080", "--token-file", file])).to.deep.equal(
        [],
      );
    });
  });
});

describe("isLoopback()", () => {
  it("is true for localhost, 127.0.0.0/8 and ::1 only", () => {
    for (const h of ["localhost", "127.0.0.1", "127.255.0.1", "::1", "0:0:0:0:0:0:0:1", "::ffff:127.0.0.1"])
      expect(isLoopback(h), h).to.equal(true);
    for (const h of ["0.0.0.0", "::", "10.0.0.1", "128.0.0.1", "example.com", "localhost.evil.com", "::ffff:10.0.0.1"])
      expect(isLoopback(h), h).to.equal(false);
  });
});
