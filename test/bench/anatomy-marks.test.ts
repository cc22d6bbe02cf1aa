import { channel } from "node:diagnostics_channel";
import { expect } from "chai";
import { MarkRecorder } from "../../bench/anatomy/mark-recorder.js";
import { describeKind, formatMarks, type Mark, parseMarks } from "../../bench/anatomy/marks.js";

const mark = (t: number, event: string, sessionId = "s1", requestId = "", name = ""): Mark => ({
  t,
  source: "coordinator",
  event,
  sessionId,
  requestId,
  name,
});

describe("anatomy marks", () => {
  it("names a session message's kind, request id and lock name", () => {
    const kind = { $case: "release", release: { requestId: "7", name: "a", owner: "o" } };
    expect(describeKind(kind)).to.deep.equal({ kind: "release", requestId: "7", name: "a" });
  });

  it("gives empty ids for a kind without them, and 'none' for no kind", () => {
    expect(describeKind({ $case: "keepAlive", keepAlive: { seq: 1n } } as never)).to.deep.equal({
      kind: "keepAlive",
      requestId: "",
      name: "",
    });
    expect(describeKind(undefined).kind).to.equal("none");
  });

  it("reads back what it writes", () => {
    const marks = [mark(1_000, "read:release", "s1", "3", "lock"), mark(2_500, "flush", "")];
    expect(parseMarks(formatMarks(marks))).to.deep.equal(marks);
  });

  it("names the line of a mark that is not well formed", () => {
    const good = formatMarks([mark(1, "flush")]);
    expect(() => parseMarks(`${good}{"t":"x"}\n`)).to.throw(/line 2: expected t, source/);
    expect(() => parseMarks(`${good}nope\n`)).to.throw(/line 2: not JSON/);
  });

  it("records what the coordinator's channels publish, a read joined by its decoding's two points, until closed", () => {
    const recorder = new MarkRecorder("coordinator");
    const acquire = { $case: "acquire", acquire: { requestId: "4", name: "x" } };
    channel("turnstile:coordinator:decoded").publish({ message: { kind: acquire }, startedAt: 5n });
    channel("turnstile:coordinator:read").publish({ sessionId: "s", kind: acquire });
    channel("turnstile:coordinator:store").publish({
      phase: "sent",
      op: "acquire",
      sessionId: "s",
      requestId: "4",
      name: "x",
    });
    channel("turnstile:coordinator:redis-flush").publish({});
    recorder.close();
    channel("turnstile:coordinator:redis-flush").publish({});
    const marks = recorder.marks();
    expect(marks.map((x) => [x.event, x.sessionId, x.requestId, x.name])).to.deep.equal([
      ["decode-start:acquire", "s", "4", "x"],
      ["decoded:acquire", "s", "4", "x"],
      ["read:acquire", "s", "4", "x"],
      ["store-sent:acquire", "s", "4", "x"],
      ["flush", "", "", ""],
    ]);
    expect(marks[0].t).to.equal(5);
    expect(marks[1].t).to.be.at.most(marks[2].t);
    expect(channel("turnstile:coordinator:read").hasSubscribers).to.equal(false);
  });
});
