import { type ClientDuplexStream, type ServiceError, status } from "@grpc/grpc-js";
import { expect } from "chai";
import { Redis } from "ioredis";
import { FailureReason, type SessionResponse } from "../../gen/ts/turnstile/v1/turnstile.js";
import { MessageInbox } from "../harness/message-inbox.js";
import { openBytes, pb, RawBytesClient } from "../harness/raw-bytes.js";
import { RawSession } from "../harness/raw-session.js";
import { startRedis, type TestRedis } from "../harness/redis-server.js";
import { acquireMsg, releaseMsg } from "../harness/requests.js";
import { startCoordinator, type TestCoordinator } from "../harness/test-coordinator.js";

const INVALID = FailureReason.FAILURE_REASON_INVALID_ARGUMENT;
const [A_FF, A_FE, A_FFFD] = [
  Buffer.from([0x61, 0xff]),
  Buffer.from([0x61, 0xfe]),
  Buffer.from([0x61, 0xef, 0xbf, 0xbd]),
];

/** SessionRequest{acquire: Acquire{...}} with the given raw field bytes. */
const acquireBody = (...fields: Buffer[]) => pb.field(2, Buffer.concat(fields));
/** A well-formed acquire's fields, with any of them replaced. */
const acquireFields = (f: { requestId?: Buffer | string; name?: Buffer | string; owner?: Buffer | string } = {}) => [
  pb.field(1, f.requestId ?? "r1"),
  pb.field(2, f.name ?? "m/ok"),
  pb.field(6, f.owner ?? "o"),
];

describe("malformed and non-UTF-8 requests", () => {
  let redis: TestRedis;
  let coord: TestCoordinator;
  let rpc: RawBytesClient;
  let client: Redis;
  let bystander: RawSession;
  const streams: ClientDuplexStream<Buffer, SessionResponse>[] = [];

  /** An opened raw Session stream and the inbox of what it receives (the status last). */
  async function rawSession() {
    const call = rpc.session();
    streams.push(call);
    const inbox = new MessageInbox<SessionResponse | { code: number; details: string }>();
    call.on("data", (r: SessionResponse) => inbox.push(r));
    call.on("error", (e: ServiceError) => inbox.push({ code: e.code, details: e.details }));
    call.write(openBytes());
    const opened = await inbox.next(10_000, "opened");
    expect((opened as SessionResponse).kind?.$case).to.equal("opened");
    return { call, next: () => inbox.next(10_000, "a response") };
  }
  async function failed(body: Buffer) {
    const s = await rawSession();
    s.call.write(body);
    const r = (await s.next()) as SessionResponse;
    if (r.kind?.$case !== "failed") throw new Error(`expected failed, got ${JSON.stringify(r.kind?.$case)}`);
    return { failed: r.kind.failed, session: s };
  }

  before(async () => {
    redis = await startRedis();
    coord = await startCoordinator(redis.url);
    rpc = new RawBytesClient(coord.address);
    client = new Redis(redis.url);
  });
  beforeEach(async () => {
    bystander = new RawSession(coord.address);
    await bystander.open();
    bystander.send(acquireMsg("keep", "m/bystander"));
    await bystander.next("acquired");
  });
  afterEach(async () => {
    bystander.send(releaseMsg("rel", "m/bystander", "keep"));
    expect((await bystander.next("released")).released.holdCount).to.equal(0);
    bystander.close();
    for (const s of streams.splice(0)) s.cancel();
  });
  after(async () => {
    rpc.close();
    client.disconnect();
    await coord.stop();
    await redis.stop();
  });

  describe("on the Session stream", () => {
    const unreadable: [string, Buffer, RegExp][] = [
      ["a truncated acquire", acquireBody(...acquireFields()).subarray(0, 7), /^acquire: could not be read/],
      ["garbage bytes", Buffer.from([0xff, 0xff, 0xff]), /^request: could not be read/],
      ["field number 0", Buffer.from([0x02, 0x00]), /^request: could not be read \(field number 0\)/],
      [
        "acquire.name sent as a varint",
        acquireBody(pb.field(1, "r1"), pb.int(2, 5)),
        /^acquire\.name: sent as wire type 0, but a string field is wire type 2$/,
      ],
      [
        "acquire.mode sent as a string",
        acquireBody(...acquireFields(), pb.field(3, "x")),
        /^acquire\.mode: sent as wire type 2, but a varint field is wire type 0$/,
      ],
      ["acquire sent as a varint", pb.int(2, 1), /^acquire: sent as wire type 0, but a message field is wire type 2$/],
      [
        "a group (wire type 3)",
        Buffer.from([0x13, 0x14]),
        /^request field 2|^acquire: could not be read \(wire type 3/,
      ],
    ];
    for (const [i, [what, body, message]] of unreadable.entries()) {
      it(`answers ${what} with Failed{INVALID_ARGUMENT} naming what could not be read, and keeps the session`, async () => {
        const { failed: f, session } = await failed(body);
        expect(f.reason).to.equal(INVALID);
        expect(f.message).to.match(message);
        session.call.write(acquireBody(...acquireFields({ requestId: "after", name: `m/after${i}` })));
        expect(((await session.next()) as SessionResponse).kind?.$case).to.equal("acquired");
        expect(await client.exists(`turnstile:{m/after${i}}:holders`)).to.equal(1);
      });
    }

    const fields: [string, Partial<Record<"requestId" | "name" | "owner", Buffer>>][] = [
      ["acquire.name", { name: A_FF }],
      ["acquire.name", { name: A_FE }],
      ["acquire.owner", { owner: A_FF }],
      ["acquire.request_id", { requestId: A_FE }],
    ];
    for (const [field, bad] of fields) {
      it(`refuses ${field} = ${Object.values(bad)[0]!.toString("hex")} (not UTF-8) naming ${field}, storing nothing`, async () => {
        const { failed: f } = await failed(acquireBody(...acquireFields(bad)));
        expect([f.reason, f.message]).to.deep.equal([INVALID, `${field}: not valid UTF-8`]);
        if (field !== "acquire.request_id") expect(f.requestId).to.equal("r1");
        expect(await client.keys("turnstile:{a*}:holders")).to.deep.equal([]);
      });
    }

    // Every string field of every Session request, each with both byte strings (message field numbers: proto).
    const streamFields: [string, number, number][] = [
      ["acquire.request_id", 2, 1],
      ["acquire.name", 2, 2],
      ["acquire.owner", 2, 6],
      ["release.request_id", 3, 1],
      ["release.name", 3, 2],
      ["release.owner", 3, 3],
      ["cancel.request_id", 5, 1],
      ["proclaim.request_id", 7, 1],
      ["proclaim.name", 7, 2],
      ["proclaim.owner", 7, 3],
    ];
    for (const [field, message, fieldNo] of streamFields) {
      it(`refuses ${field} as 61 FF and as 61 FE naming ${field}, and Redis holds nothing new`, async () => {
        const s = await rawSession();
        const keysBefore = (await client.keys("*")).sort();
        for (const bad of [A_FF, A_FE]) {
          const good: Record<number, string> =
            message === 5
              ? { 1: "r1" }
              : message === 2
                ? { 1: "r1", 2: "m/ok", 6: "o" }
                : { 1: "r1", 2: "m/ok", 3: "o" };
          const fields = Object.entries(good).map(([n, v]) => pb.field(Number(n), Number(n) === fieldNo ? bad : v));
          s.call.write(pb.field(message, Buffer.concat(fields)));
          const r = (await s.next()) as SessionResponse;
          expect(r.kind?.$case).to.equal("failed");
          const f = (r as { kind: { $case: "failed"; failed: { reason: FailureReason; message: string } } }).kind
            .failed;
          expect([f.reason, f.message]).to.deep.equal([INVALID, `${field}: not valid UTF-8`]);
        }
        expect((await client.keys("*")).sort()).to.deep.equal(keysBefore);
      });
    }

    it('takes 61 EF BF BD as the valid name "a\\uFFFD", one lock distinct from the refused byte strings', async () => {
      const s = await rawSession();
      for (const [i, name] of [A_FF, A_FFFD, A_FE].entries()) {
        s.call.write(acquireBody(...acquireFields({ requestId: `r${i}`, name })));
      }
      const answers = [await s.next(), await s.next(), await s.next()] as SessionResponse[];
      // Refusals are answered before the store replies, so answers are matched by request id.
      const byRequest = Object.fromEntries(
        answers.map((r) => {
          const k = r.kind as unknown as { $case: string } & Record<string, { requestId: string }>;
          return [k[k.$case].requestId, k.$case];
        }),
      );
      expect(byRequest).to.deep.equal({ r0: "failed", r1: "acquired", r2: "failed" });
      expect(await client.keys("turnstile:{a*}:holders")).to.deep.equal(["turnstile:{a\uFFFD}:holders"]);
    });

    it("ends a stream whose Open has a client_name that is not UTF-8 with INVALID_ARGUMENT", async () => {
      const call = rpc.session();
      streams.push(call);
      const ended = new Promise<ServiceError>((resolve) => call.on("error", resolve));
      call.write(pb.field(1, pb.field(1, A_FF)));
      const err = await ended;
      expect([err.code, err.details]).to.deep.equal([status.INVALID_ARGUMENT, "open.client_name: not valid UTF-8"]);
    });

    const openFields: [string, Buffer][] = [
      ["open.client_name", pb.field(1, A_FE)],
      ["open.resume_session_id", pb.field(3, A_FF)],
      ["open.resume_secret", pb.field(4, A_FE)],
      ["open.held[0].name", pb.field(5, Buffer.concat([pb.field(1, A_FF), pb.field(2, "o")]))],
      ["open.held[0].owner", pb.field(5, Buffer.concat([pb.field(1, "m/x"), pb.field(2, A_FE)]))],
    ];
    for (const [field, body] of openFields) {
      it(`ends a stream whose Open has ${field} not UTF-8 with INVALID_ARGUMENT naming ${field}`, async () => {
        const sessionsBefore = (await client.keys("turnstile:session:*")).sort();
        const call = rpc.session();
        streams.push(call);
        const ended = new Promise<ServiceError>((resolve) => call.on("error", resolve));
        call.write(pb.field(1, body));
        const err = await ended;
        expect([err.code, err.details]).to.deep.equal([status.INVALID_ARGUMENT, `${field}: not valid UTF-8`]);
        expect((await client.keys("turnstile:session:*")).sort()).to.deep.equal(sessionsBefore);
      });
    }

    it("ends a stream whose first message cannot be read with INVALID_ARGUMENT", async () => {
      const call = rpc.session();
      streams.push(call);
      const ended = new Promise<ServiceError>((resolve) => call.on("error", resolve));
      call.write(Buffer.from([0x0a, 0x05, 0x01]));
      const err = await ended;
      expect(err.code).to.equal(status.INVALID_ARGUMENT);
      expect(err.details).to.match(/^open: could not be read/);
    });
  });

  describe("on the unary RPCs and Watch", () => {
    const cases: [string, Buffer, string | RegExp][] = [
      ["Describe", pb.field(1, A_FF), "describe.name: not valid UTF-8"],
      ["Describe", Buffer.from([0x0a, 0x09, 0x61]), /^describe\.name: could not be read/],
      ["Describe", pb.field(1, A_FE), "describe.name: not valid UTF-8"],
      ["List", pb.field(1, A_FE), "list.prefix: not valid UTF-8"],
      ["List", pb.field(1, A_FF), "list.prefix: not valid UTF-8"],
      ["List", pb.field(3, A_FE), "list.page_token: not valid UTF-8"],
      ["Revoke", Buffer.concat([pb.field(1, A_FF), pb.field(3, "keep")]), "revoke.name: not valid UTF-8"],
      ["Revoke", Buffer.concat([pb.field(1, "m/bystander"), pb.field(2, A_FE)]), "revoke.session_id: not valid UTF-8"],
      ["Revoke", Buffer.concat([pb.field(1, "m/bystander"), pb.field(3, A_FE)]), "revoke.owner: not valid UTF-8"],
      ["List", pb.field(3, A_FF), "list.page_token: not valid UTF-8"],
      ["List", pb.field(2, "x"), "list.page_size: sent as wire type 2, but a varint field is wire type 0"],
      ["Revoke", Buffer.concat([pb.field(1, "m/bystander"), pb.field(3, A_FF)]), "revoke.owner: not valid UTF-8"],
      ["Revoke", Buffer.from([0xff]), /^revoke: could not be read/],
      // Multi-word methods: the same root as their value checks (check_fence.fencing_token, request_release.name).
      ["CheckFence", pb.field(1, A_FF), "check_fence.name: not valid UTF-8"],
      [
        "RequestRelease",
        Buffer.concat([pb.field(1, "a"), pb.field(2, A_FE)]),
        "request_release.reason: not valid UTF-8",
      ],
    ];
    for (const [method, body, details] of cases) {
      it(`answers ${method} with ${body.toString("hex")} with INVALID_ARGUMENT naming ${String(details)}`, async () => {
        const st = await rpc.unary(method, body);
        expect(st.code).to.equal(status.INVALID_ARGUMENT);
        if (typeof details === "string") expect(st.details).to.equal(details);
        else expect(st.details).to.match(details);
      });
    }

    it("ends a Watch whose name is 61 FF or 61 FE with INVALID_ARGUMENT naming watch.name", async () => {
      for (const bad of [A_FF, A_FE]) {
        expect(await rpc.watch(pb.field(1, bad))).to.deep.equal({
          code: status.INVALID_ARGUMENT,
          details: "watch.name: not valid UTF-8",
        });
      }
    });

    it("ends a Watch whose body is truncated or sends the name as a varint with INVALID_ARGUMENT", async () => {
      const truncated = await rpc.watch(Buffer.from([0x0a, 0x09, 0x61]));
      expect(truncated).to.include({ code: status.INVALID_ARGUMENT });
      expect((truncated as { details: string }).details).to.match(/^watch\.name: could not be read/);
      expect(await rpc.watch(pb.int(1, 7))).to.deep.equal({
        code: status.INVALID_ARGUMENT,
        details: "watch.name: sent as wire type 0, but a string field is wire type 2",
      });
    });

    it("still answers a well-formed Describe with a name of U+FFFD", async () => {
      expect(await rpc.unary("Describe", pb.field(1, A_FFFD))).to.deep.equal({ code: 0, details: "" });
    });
  });
});
