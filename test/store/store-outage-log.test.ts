import { expect } from "chai";
import { StoreOutageLog } from "../../server/store/store-outage-log.js";
import { StoreUnavailableError } from "../../server/store/store-unavailable-error.js";
import { captureLog as capture } from "../harness/log-capture.js";

describe("StoreOutageLog", () => {
  const down = new StoreUnavailableError("redis: connection is closed", { outcome: "unchanged" });

  it("logs an outage of 500 failures as two lines at info: its start (message, no stack) and its end with the count", () => {
    const { log, lines } = capture("info");
    const outage = new StoreOutageLog(log);
    for (let i = 0; i < 500; i++) outage.failed("keepalive renewal", down, { session: `s${i}` });
    outage.failed("re-check", down);
    expect(outage.inOutage).to.equal(true);
    outage.succeeded();
    outage.succeeded();
    expect(
      lines.map(({ level, msg, what, error, failures, byWhat }) => ({ level, msg, what, error, failures, byWhat })),
    ).to.deep.equal([
      {
        level: 40,
        msg: "store errors began: logged once until the store answers again (each failure at debug level)",
        what: "keepalive renewal",
        error: "redis: connection is closed",
        failures: undefined,
        byWhat: undefined,
      },
      {
        level: 30,
        msg: "store errors ended",
        what: undefined,
        error: undefined,
        failures: 501,
        byWhat: { "keepalive renewal": 500, "re-check": 1 },
      },
    ]);
    expect(JSON.stringify(lines)).to.not.include("stack");
    expect(lines[1].outageMs).to.be.a("number");
  });

  it("keeps every failure with its stack at debug level, and starts afresh after an outage ended", () => {
    const { log, lines } = capture("debug");
    const outage = new StoreOutageLog(log);
    outage.failed("keepalive renewal", down);
    outage.failed("keepalive renewal", down);
    outage.succeeded();
    outage.failed("keepalive renewal", down);
    const debug = lines.filter((l) => l.level === 20);
    expect(debug).to.have.length(3);
    expect((debug[0].err as { stack: string }).stack).to.include("StoreUnavailableError");
    expect(lines.filter((l) => l.level === 40)).to.have.length(2);
    expect(StoreOutageLog.isOutage(down)).to.equal(true);
    expect(StoreOutageLog.isOutage(new Error("a bug"))).to.equal(false);
  });
});
