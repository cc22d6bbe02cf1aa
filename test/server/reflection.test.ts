import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { credentials, loadPackageDefinition } from "@grpc/grpc-js";
import { loadSync } from "@grpc/proto-loader";
import { expect } from "chai";
import { pino } from "pino";
import { Coordinator } from "../../server/coordinator.js";
import { MemoryStore } from "../../server/store/memory/memory-store.js";

// The reflection protocol's own .proto, as shipped in @grpc/reflection: what grpcurl speaks.
const REFLECTION_PROTO = join(
  dirname(createRequire(import.meta.url).resolve("@grpc/reflection")),
  "../proto/grpc/reflection/v1/reflection.proto",
);

type ReflectionStream = {
  on(event: "data", listener: (reply: Reply) => void): void;
  on(event: "error", listener: (err: Error) => void): void;
  write(request: Record<string, string>): void;
  end(): void;
};

type Reply = {
  listServicesResponse?: { service: { name: string }[] };
  fileDescriptorResponse?: { fileDescriptorProto: Buffer[] };
  errorResponse?: { errorCode: number; errorMessage: string };
};

/** Sends one ServerReflectionRequest on a fresh ServerReflectionInfo stream and resolves with the reply. */
function ask(address: string, request: Record<string, string>): Promise<Reply> {
  const pkg = loadPackageDefinition(loadSync(REFLECTION_PROTO)) as unknown as {
    grpc: {
      reflection: {
        v1: {
          ServerReflection: new (a: string, c: unknown) => { serverReflectionInfo(): ReflectionStream; close(): void };
        };
      };
    };
  };
  const client = new pkg.grpc.reflection.v1.ServerReflection(address, credentials.createInsecure());
  return new Promise((resolve, reject) => {
    const stream = client.serverReflectionInfo();
    stream.on("data", (reply: Reply) => {
      resolve(reply);
      stream.end();
      client.close();
    });
    stream.on("error", reject);
    stream.write(request);
  });
}

describe("server reflection (grpc.reflection.v1)", () => {
  let coordinator: Coordinator;
  let address: string;

  before(async () => {
    coordinator = new Coordinator({ store: new MemoryStore(), log: pino({ level: "silent" }), listen: "127.0.0.1:0" });
    address = `127.0.0.1:${await coordinator.start()}`;
  });
  after(() => coordinator.stop());

  it("lists turnstile.v1.LockService and grpc.health.v1.Health (what `grpcurl list` shows)", async () => {
    const reply = await ask(address, { listServices: "" });
    const names = reply.listServicesResponse!.service.map((s) => s.name);
    expect(names).to.include.members(["turnstile.v1.LockService", "grpc.health.v1.Health"]);
  });

  it("returns the file descriptor of turnstile.v1.LockService with its Session method, and the files it imports", async () => {
    const reply = await ask(address, { fileContainingSymbol: "turnstile.v1.LockService" });
    const files = reply.fileDescriptorResponse!.fileDescriptorProto.map((b) => Buffer.from(b).toString("latin1"));
    // Each file under its real path, as protoc names it, with its imports beside it.
    const own = files.find((f) => f.includes("turnstile/v1/turnstile.proto") && f.includes("LockService"));
    expect(own).to.be.a("string");
    expect(own).to.include("google/protobuf/duration.proto");
    expect(files.some((f) => f.startsWith("\n\x1egoogle/protobuf/duration.proto"))).to.equal(true);
    expect(own).to.include("LockService").and.to.include("Session").and.to.include("SessionRequest");
  });
});
