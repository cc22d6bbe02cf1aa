import { expect } from "chai";
import { SessionRequest } from "../../gen/ts/turnstile/v1/turnstile.js";
import { loadMessageSchema } from "../../server/edge/strict-wire/message-schema.js";
import { wireProblem } from "../../server/edge/strict-wire/wire-problem.js";
import { pb } from "../harness/raw-bytes.js";
import { acquireMsg } from "../harness/requests.js";

const SESSION = "turnstile.v1.SessionRequest";

describe("wireProblem()", () => {
  const schema = loadMessageSchema();
  const problem = (bytes: Buffer, type = SESSION, path = "") => wireProblem(schema, type, bytes, path);
  const held = (name: Buffer | string) => pb.field(5, Buffer.concat([pb.field(1, name), pb.field(2, "o")]));

  it("finds nothing wrong with what the generated encoder writes", () => {
    const bytes = SessionRequest.encode(acquireMsg("r1", "a/\u00e9\uFFFD", { waitMs: 1500 })).finish();
    expect(problem(Buffer.from(bytes))).to.equal(undefined);
  });

  it("maps every RPC's path to its request type", () => {
    expect(schema.requestTypes.get("/turnstile.v1.LockService/Revoke")).to.equal("turnstile.v1.RevokeRequest");
  });

  it("skips fields it does not know, of every wire type", () => {
    const unknown = Buffer.concat([pb.int(99, 7), pb.field(98, "x"), Buffer.from([0x8d, 0x06, 1, 2, 3, 4])]);
    expect(problem(unknown)).to.equal(undefined);
  });

  it("names the element of a repeated nested field that is not UTF-8", () => {
    const open = pb.field(1, Buffer.concat([held("ok"), held(Buffer.from([0xc3]))]));
    expect(problem(open)).to.equal("open.held[1].name: not valid UTF-8");
  });

  it("names a well-known type's field sent with the wrong wire type", () => {
    const open = pb.field(1, pb.field(2, pb.field(1, "12")));
    expect(problem(open)).to.equal("open.ttl.seconds: sent as wire type 2, but a varint field is wire type 0");
  });

  it("refuses a tag varint longer than 10 bytes", () => {
    expect(problem(Buffer.from([...Array(10).fill(0x80), 0x01]))).to.equal(
      "request: could not be read (a field tag is truncated or longer than 10 bytes)",
    );
  });

  it("refuses an unknown field whose length runs past the end, naming its number", () => {
    expect(problem(Buffer.from([0xa2, 0x06, 0x05, 0x01]))).to.equal(
      "request field 100: could not be read (the message ends inside it)",
    );
  });

  it("names the message by the path it is given, for the unary RPCs", () => {
    expect(problem(pb.field(1, Buffer.from([0xff])), "turnstile.v1.DescribeRequest", "describe")).to.equal(
      "describe.name: not valid UTF-8",
    );
  });
});
