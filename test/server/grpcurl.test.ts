import { expect } from "chai";
import { pino } from "pino";
import { Coordinator } from "../../server/coordinator.js";
import { MemoryStore } from "../../server/store/memory/memory-store.js";
import { findGrpcurl, grpcurl, grpcurlRequired } from "../harness/grpcurl.js";

const INSTALL = "run scripts/install-grpcurl.sh (go install into .tools/bin)";

describe("server reflection, read by stock grpcurl", () => {
  let coordinator: Coordinator;
  let address: string;
  let binary: string;

  before(async function () {
    const found = findGrpcurl();
    if (found === undefined) {
      if (grpcurlRequired()) throw new Error(`grpcurl not found in .tools/bin or on PATH and CI=true: ${INSTALL}`);
      console.error(`    skipped: grpcurl not found in .tools/bin or on PATH; ${INSTALL}`);
      this.skip();
    }
    binary = found;
    coordinator = new Coordinator({ store: new MemoryStore(), log: pino({ level: "silent" }), listen: "127.0.0.1:0" });
    address = `127.0.0.1:${await coordinator.start()}`;
  });
  after(() => coordinator?.stop());

  it("lists turnstile.v1.LockService and grpc.health.v1.Health", async () => {
    const run = await grpcurl(binary, [address, "list"]);
    expect(run.code, run.stderr).to.equal(0);
    expect(run.stdout.trim().split("\n")).to.include.members(["turnstile.v1.LockService", "grpc.health.v1.Health"]);
  });

  it("describes turnstile.v1.LockService, resolving google.protobuf.Duration from its import", async () => {
    const [service, open] = await Promise.all([
      grpcurl(binary, [address, "describe", "turnstile.v1.LockService"]),
      grpcurl(binary, [address, "describe", "turnstile.v1.Open"]),
    ]);
    expect([service.code, open.code], service.stderr + open.stderr).to.deep.equal([0, 0]);
    expect(service.stdout).to.match(/rpc Session \( stream \.turnstile\.v1\.SessionRequest \) returns \( stream /);
    expect(service.stdout).to.include("rpc Describe ( .turnstile.v1.DescribeRequest )");
    expect(open.stdout).to.match(/\.google\.protobuf\.Duration ttl = 2;/);
  });

  it("calls grpc.health.v1.Health/Check (whose file has a map field) and gets SERVING", async () => {
    const [whole, lockService] = await Promise.all([
      grpcurl(binary, [address, "grpc.health.v1.Health/Check"]),
      grpcurl(binary, ["-d", '{"service":"turnstile.v1.LockService"}', address, "grpc.health.v1.Health/Check"]),
    ]);
    expect([whole.code, lockService.code], whole.stderr + lockService.stderr).to.deep.equal([0, 0]);
    expect(JSON.parse(whole.stdout)).to.deep.equal({ status: "SERVING" });
    expect(JSON.parse(lockService.stdout)).to.deep.equal({ status: "SERVING" });
  });

  it("calls the unary LockService/Describe and LockService/List with JSON built from the reflected types", async () => {
    const [described, listed] = await Promise.all([
      grpcurl(binary, ["-d", '{"name":"grpcurl/free"}', address, "turnstile.v1.LockService/Describe"]),
      grpcurl(binary, ["-d", '{"prefix":"grpcurl/"}', address, "turnstile.v1.LockService/List"]),
    ]);
    expect([described.code, listed.code], described.stderr + listed.stderr).to.deep.equal([0, 0]);
    expect(JSON.parse(described.stdout)).to.deep.equal({ name: "grpcurl/free" });
    expect(JSON.parse(listed.stdout)).to.deep.equal({});
  });
});
