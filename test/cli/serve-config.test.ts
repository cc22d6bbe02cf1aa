import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "chai";
import { DEFAULT_LIMITS } from "../../server/config/limits.js";
import { loadServeConfig, type ServeConfig } from "../../server/config/serve-config.js";

describe("turnstile serve settings", () => {
  let dir: string;
  const file = (content: unknown) => {
    const path = join(dir, `config-${Math.random().toString(36).slice(2)}.json`);
    writeFileSync(path, typeof content === "string" ? content : JSON.stringify(content));
    return path;
  };
  const load = (argv: string[], env: Record<string, string> = {}) => loadServeConfig({ argv, env });
  const config = (argv: string[], env: Record<string, string> = {}): ServeConfig => {
    const result = load(argv, env);
    if (!result.ok) throw new Error(result.errors.join("\n"));
    return result.config;
  };
  const errors = (argv: string[], env: Record<string, string> = {}): string[] => {
    const result = load(argv, env);
    return result.ok ? [] : result.errors;
  };

  before(() => {
    dir = mkdtempSync(join(tmpdir(), "turnstile-config-"));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  describe("loadServeConfig()", () => {
    it("reads --fencing-key repeated (the first signs), from a comma-separated env var and from a config array, with --fencing-issuer", () => {
      const [k1, k2] = [file("k1"), file("k2")];
      expect(config(["--fencing-key", k1, "--fencing-key", k2]).fencing).to.deep.equal({
        keyFiles: [k1, k2],
        issuer: "turnstile",
      });
      expect(
        config([], { TURNSTILE_FENCING_KEY: `${k2},${k1}`, TURNSTILE_FENCING_ISSUER: "payments" }).fencing,
      ).to.deep.equal({
        keyFiles: [k2, k1],
        issuer: "payments",
      });
      expect(config(["--config", file({ "fencing-key": [k1] })]).fencing).to.deep.equal({
        keyFiles: [k1],
        issuer: "turnstile",
      });
      expect(config([]).fencing).to.equal(undefined);
      expect(errors(["--fencing-key", join(dir, "missing.pem")])).to.deep.equal([
        `fencing-key: cannot read ${join(dir, "missing.pem")} (ENOENT)`,
      ]);
      expect(errors([], { TURNSTILE_FENCING_KEY: `${k1},` })[0]).to.match(/^fencing-key: .* has an empty file name/);
    });

    it("defaults to 127.0.0.1:7420, the embedded store, no metrics and the default limits", () => {
      expect(config([])).to.deep.equal({
        listen: "127.0.0.1:7420",
        metrics: undefined,
        metricsPrefixes: { depth: 1, prefixes: undefined },
        otlpEndpoint: undefined,
        otlpSampleRatio: 1,
        http: undefined,
        logLevel: "info",
        shutdownGraceMs: 5000,
        redis: undefined,
        fenceRetainMs: 30 * 86_400_000,
        limits: DEFAULT_LIMITS,
        lockDelays: {},
      });
    });

    it("reads the lock-delay defaults by name prefix, from a flag or the config file; '=5s' covers every name", () => {
      expect(config(["--lock-delay", "jobs/=5s, payments/=250ms,=1s"]).lockDelays).to.deep.equal({
        "jobs/": 5000,
        "payments/": 250,
        "": 1000,
      });
      expect(config(["--config", file({ "lock-delay": "a=b/=60s" })]).lockDelays).to.deep.equal({ "a=b/": 60_000 });
      // Refused with one line naming the setting: above 60 s, or without a duration.
      const over = /^lock-delay: "jobs\/=61s" exceeds the maximum lock-delay of 60000 ms \(60s\)$/;
      expect(errors(["--lock-delay", "jobs/=61s"]))
        .to.have.length(1)
        .and.to.match(over);
      expect(errors(["--lock-delay", "jobs/"]))
        .to.have.length(1)
        .and.to.match(/^lock-delay: "jobs\/" is not PREFIX=DURATION/);
    });

    it("takes a flag over an env var over the config file over the default", () => {
      const path = file({ listen: "10.0.0.1:1", "max-sessions": 7, "max-ttl": "2h", "log-level": "warn" });
      const c = config(["--config", path, "--listen", "127.0.0.1:9"], {
        TURNSTILE_LISTEN: "127.0.0.1:8",
        TURNSTILE_MAX_SESSIONS: "8",
      });
      expect([c.listen, c.limits.maxSessions, c.limits.maxTtlMs, c.logLevel]).to.deep.equal([
        "127.0.0.1:9",
        8,
        7_200_000,
        "warn",
      ]);
    });

    it("reads the metrics prefix depth or prefix list, and the OTLP endpoint and sample ratio", () => {
      const c = config(["--metrics-prefix-depth", "2", "--metrics-prefixes", "billing/, jobs/"], {
        TURNSTILE_OTLP_ENDPOINT: "http://127.0.0.1:4318",
        TURNSTILE_OTLP_SAMPLE_RATIO: "0.25",
      });
      expect([c.metricsPrefixes, c.otlpEndpoint, c.otlpSampleRatio]).to.deep.equal([
        { depth: 2, prefixes: ["billing/", "jobs/"] },
        "http://127.0.0.1:4318",
        0.25,
      ]);
    });

    it("reads the config file named by TURNSTILE_CONFIG, and treats an empty env var as unset", () => {
      const c = config([], { TURNSTILE_CONFIG: file({ "default-ttl": "20s" }), TURNSTILE_DEFAULT_TTL: "" });
      expect(c.limits.defaultTtlMs).to.equal(20_000);
    });

    it("builds the Sentinel, Cluster and URL targets with password and TLS", () => {
      const ca = file("-----BEGIN CERTIFICATE-----");
      expect(
        config(["--redis-sentinel", "h1:26379, h2:26380", "--redis-master", "m", "--redis-password", "pw"]).redis,
      ).to.deep.equal({
        target: {
          kind: "sentinel",
          sentinels: [
            { host: "h1", port: 26379 },
            { host: "h2", port: 26380 },
          ],
          masterName: "m",
        },
        auth: { password: "pw", sentinelPassword: undefined, tls: false, tlsCaFile: undefined },
        commandTimeoutMs: 2000,
        replicaAcks: "majority",
        replicaAckTimeoutMs: 1000,
      });
      expect(config(["--redis-cluster", "[::1]:7000", "--redis-tls", "--redis-tls-ca", ca]).redis).to.deep.equal({
        target: { kind: "cluster", nodes: [{ host: "::1", port: 7000 }] },
        auth: { password: undefined, sentinelPassword: undefined, tls: true, tlsCaFile: ca },
        commandTimeoutMs: 2000,
        replicaAcks: "majority",
        replicaAckTimeoutMs: 1000,
      });
      expect(config([], { TURNSTILE_REDIS_URL: "rediss://:pw@h:6380/2" }).redis?.target).to.deep.equal({
        kind: "url",
        url: "rediss://:pw@h:6380/2",
      });
    });

    it("waits for a majority of replicas with Sentinels or Cluster, for none with one URL, unless told otherwise", () => {
      const sentinel = ["--redis-sentinel", "h:26379", "--redis-master", "m"];
      expect(config(sentinel).redis?.replicaAcks).to.equal("majority");
      expect(config(["--redis-cluster", "h:7000"]).redis?.replicaAcks).to.equal("majority");
      expect(config(["--redis-cluster", "h:7000", "--redis-replica-acks", "1"]).redis?.replicaAcks).to.equal(1);
      expect(config(["--redis-cluster", "h:7000", "--redis-replica-acks", "off"]).redis?.replicaAcks).to.equal(0);
      expect(config([...sentinel, "--redis-replica-acks", "off"]).redis?.replicaAcks).to.equal(0);
      expect(config(["--redis", "redis://h:1"]).redis?.replicaAcks).to.equal(0);
      const two = config([
        "--redis",
        "redis://h:1",
        "--redis-replica-acks",
        "2",
        "--redis-replica-ack-timeout",
        "500ms",
      ]);
      expect([two.redis?.replicaAcks, two.redis?.replicaAckTimeoutMs]).to.deep.equal([2, 500]);
    });

    const bad: [string, string[], Record<string, string>, RegExp][] = [
      [
        "a replica count that is not a number, majority or off",
        ["--redis", "redis://h:1", "--redis-replica-acks", "all"],
        {},
        /^redis-replica-acks: "all" from flag --redis-replica-acks is not a replica count, majority or off$/,
      ],
      [
        "majority without Sentinels",
        ["--redis", "redis://h:1", "--redis-replica-acks", "majority"],
        {},
        /^redis-replica-acks: majority needs --redis-sentinel or --redis-cluster/,
      ],
      [
        "a replica ack timeout not shorter than the command timeout",
        ["--redis", "redis://h:1", "--redis-replica-acks", "1", "--redis-replica-ack-timeout", "2s"],
        {},
        /^redis-replica-ack-timeout: must be shorter than --redis-command-timeout$/,
      ],
      [
        "a listen address without a port",
        ["--listen", "localhost"],
        {},
        /^listen: "localhost" from flag --listen is not HOST:PORT/,
      ],
      [
        "a port over 65535",
        [],
        { TURNSTILE_LISTEN: "h:70000" },
        /^listen: "h:70000" from env TURNSTILE_LISTEN is not HOST:PORT/,
      ],
      [
        "a metrics address that is neither HOST:PORT nor off",
        ["--metrics", "on"],
        {},
        /^metrics: "on" from flag --metrics is not HOST:PORT/,
      ],
      [
        "a web console address off loopback without security settings (no access control)",
        ["--http", "0.0.0.0:8080"],
        {},
        /^http: 0\.0\.0\.0 is not a loopback address and the console has no access control without security settings/,
      ],
      ["an unknown log level", ["--log-level", "loud"], {}, /^log-level: "loud" .* is not a log level \(trace\|debug/],
      [
        "a duration without a unit",
        [],
        { TURNSTILE_MAX_TTL: "3600" },
        /^max-ttl: "3600" from env TURNSTILE_MAX_TTL is not a duration/,
      ],
      [
        "a count of zero",
        ["--max-sessions", "0"],
        {},
        /^max-sessions: "0" from flag --max-sessions is not a whole number of at least 1/,
      ],
      [
        "a count that is not a number",
        [],
        { TURNSTILE_MAX_NAME_BYTES: "lots" },
        /^max-name-bytes: "lots" .* not a whole number/,
      ],
      [
        "a Redis URL of another scheme",
        ["--redis", "http://h:1"],
        {},
        /^redis: "http:\/\/h:1" from flag --redis is not a Redis URL/,
      ],
      [
        "a Sentinel list with a bad entry",
        ["--redis-sentinel", "h:1,h2", "--redis-master", "m"],
        {},
        /^redis-sentinel: .* \("h2" is not HOST:PORT/,
      ],
      ["a boolean that is not one", [], { TURNSTILE_REDIS_TLS: "maybe" }, /^redis-tls: "maybe" .* is not a boolean/],
      [
        "two Redis deployments at once",
        ["--redis", "redis://h:1", "--redis-cluster", "h:2"],
        {},
        /^redis: --redis and --redis-cluster are alternatives: set only one$/,
      ],
      [
        "Sentinels without a master name",
        ["--redis-sentinel", "h:1"],
        {},
        /^redis-master: --redis-sentinel and --redis-master go together/,
      ],
      [
        "TTL bounds out of order",
        ["--min-ttl", "20s"],
        {},
        /^default-ttl: min-ttl \(20000 ms\) <= default-ttl \(15000 ms\) <= max-ttl/,
      ],
      [
        "an unreadable CA file",
        ["--redis-tls-ca", "/nonexistent/ca.pem"],
        {},
        /^redis-tls-ca: cannot read \/nonexistent\/ca.pem \(ENOENT\)$/,
      ],
      [
        "a metrics prefix depth of 0",
        ["--metrics-prefix-depth", "0"],
        {},
        /^metrics-prefix-depth: "0" from flag .*at least 1/,
      ],
      [
        "an empty metrics prefix",
        ["--metrics-prefixes", "a/,,b/"],
        {},
        /^metrics-prefixes: an empty prefix in the list$/,
      ],
      [
        "an OTLP endpoint that is not a URL",
        ["--otlp-endpoint", "collector:4318"],
        {},
        /^otlp-endpoint: expected an http/,
      ],
      [
        "a sample ratio above 1",
        ["--otlp-sample-ratio", "1.5"],
        {},
        /^otlp-sample-ratio: expected a number from 0 to 1, got "1.5"$/,
      ],
      [
        "a negative count given as its own argument (not parseArgs's 'argument is ambiguous')",
        ["--max-name-bytes", "-5"],
        {},
        /^max-name-bytes: "-5" from flag --max-name-bytes is not a whole number of at least 1$/,
      ],
      ["an unknown flag", ["--frobnicate", "1"], {}, /^Unknown option '--frobnicate' \(see turnstile serve --help\)$/],
      ["a flag without its value", ["--listen"], {}, /^Option '--listen <value>' argument missing/],
      [
        "a missing config file",
        ["--config", "/nonexistent/t.json"],
        {},
        /^config: cannot read \/nonexistent\/t.json: ENOENT/,
      ],
    ];
    for (const [what, argv, env, pattern] of bad) {
      it(`rejects ${what} with one line naming the setting`, () => {
        const found = errors(argv, env);
        expect(found).to.have.length(1, found.join("\n"));
        expect(found[0]).to.match(pattern);
      });
    }

    it("refuses every duration that reaches a timer above 2147483647 ms, from a flag, an env var or the config file; fence-retention may exceed it", () => {
      const over = (key: string, raw: string, source: string) =>
        `${key}: "${raw}" from ${source} exceeds the maximum of 2147483647ms (about 24.8d), the longest timer`;
      const timed = ["shutdown-grace", "redis-command-timeout", "redis-replica-ack-timeout", "open-timeout"];
      for (const key of timed)
        expect(errors([`--${key}`, "30d"]), key).to.deep.equal([over(key, "30d", `flag --${key}`)]);
      expect(errors(["--shutdown-grace", "100000d"])).to.deep.equal([
        over("shutdown-grace", "100000d", "flag --shutdown-grace"),
      ]);
      // The TTLs and the wait reach timers too (lease ends, the acquire's wait): the order check
      // of the TTLs still holds within the bound.
      const path = file({ "max-ttl": "25d", "default-ttl": "25d" });
      expect(errors(["--config", path], { TURNSTILE_MAX_WAIT: "30d", TURNSTILE_MIN_TTL: "24.9d" })).to.deep.equal([
        over("min-ttl", "24.9d", "env TURNSTILE_MIN_TTL"),
        over("max-ttl", "25d", `config file ${path}`),
        over("default-ttl", "25d", `config file ${path}`),
        over("max-wait", "30d", "env TURNSTILE_MAX_WAIT"),
      ]);
      const longest = config(["--max-wait", "2147483647ms", "--max-ttl", "24d", "--shutdown-grace", "24d"]);
      expect([longest.limits.maxWaitMs, longest.limits.maxTtlMs, longest.shutdownGraceMs]).to.deep.equal([
        2_147_483_647,
        24 * 86_400_000,
        24 * 86_400_000,
      ]);
      // Only Redis's PEXPIRE (and the embedded store's lazy sweep) see it: no timer.
      expect(config(["--fence-retention", "365d"]).fenceRetainMs).to.equal(365 * 86_400_000);
    });

    it("rejects a config file that is not a JSON object, and unknown or badly typed keys in it", () => {
      expect(errors(["--config", file("{not json")]))
        .to.have.length(1)
        .and.to.match(/^config: cannot read .*: not JSON/);
      expect(errors(["--config", file([1])])[0]).to.match(/must hold a JSON object of settings keyed by flag name/);
      const path = file({ listn: "h:1", "max-ttl": 60, listen: 7420 });
      expect(errors(["--config", path])).to.deep.equal([
        `config: ${path} has the unknown setting "listn" (keys are flag names without the leading --, e.g. "max-ttl")`,
        `listen: 7420 from config file ${path} must be a string`,
        `max-ttl: 60 from config file ${path} is not a duration: write it as text with a unit, e.g. "15s"`,
      ]);
    });
  });
});
