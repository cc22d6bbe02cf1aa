import { status } from "@grpc/grpc-js";
import { expect } from "chai";
import { classifyStreamEnd, decideStreamEnd, type StreamEndContext } from "../../client/session/stream-end.js";

const end = (code: status, details = "") => ({ code, details });
const established: StreamEndContext = {
  established: true,
  failedOpens: 0,
  addressCount: 2,
  wasOpened: false,
  nowMs: 10_000,
  renewedAtMs: 0,
  ttlMs: 15_000,
};

describe("stream end", () => {
  describe("classifyStreamEnd()", () => {
    it("retries at once after a drain, after a backoff for other transport trouble", () => {
      expect(
        classifyStreamEnd(end(status.UNAVAILABLE, "coordinator draining: resume on another coordinator")),
      ).to.equal("retry-now");
      for (const code of [status.UNAVAILABLE, status.CANCELLED, status.DEADLINE_EXCEEDED, status.INTERNAL, status.OK]) {
        expect(classifyStreamEnd(end(code))).to.equal("retry");
      }
      expect(classifyStreamEnd(undefined)).to.equal("retry");
    });

    it("reads NOT_FOUND as expired, UNAUTHENTICATED as refused, and bad-session statuses as fatal", () => {
      expect(classifyStreamEnd(end(status.NOT_FOUND))).to.equal("expired");
      expect(classifyStreamEnd(end(status.UNAUTHENTICATED))).to.equal("refused");
      for (const code of [
        status.INVALID_ARGUMENT,
        status.RESOURCE_EXHAUSTED,
        status.FAILED_PRECONDITION,
        status.ABORTED,
      ]) {
        expect(classifyStreamEnd(end(code))).to.equal("fatal");
      }
    });
  });

  describe("decideStreamEnd()", () => {
    it("gives a first open one attempt per address, then fails", () => {
      const first = { ...established, established: false };
      const unavailable = end(status.UNAVAILABLE);
      expect(decideStreamEnd(unavailable, { ...first, failedOpens: 1 })).to.deep.equal({
        action: "reconnect",
        when: "backoff",
      });
      expect(decideStreamEnd(unavailable, { ...first, failedOpens: 2 })).to.deep.equal({ action: "fail" });
      expect(decideStreamEnd(end(status.INVALID_ARGUMENT), { ...first, failedOpens: 1 })).to.deep.equal({
        action: "fail",
      });
    });

    it("reconnects a session while its lease may still be alive, and expires it after a failed attempt once it cannot be", () => {
      const unavailable = end(status.UNAVAILABLE);
      expect(decideStreamEnd(unavailable, established)).to.deep.equal({ action: "reconnect", when: "backoff" });
      const late = { ...established, nowMs: 15_000 };
      expect(decideStreamEnd(unavailable, late)).to.deep.equal({ action: "expire", why: "unreachable" });
      // A stream that had opened renewed the session: try to resume it and let the coordinator judge.
      expect(decideStreamEnd(unavailable, { ...late, wasOpened: true })).to.deep.equal({
        action: "reconnect",
        when: "backoff",
      });
    });

    it("expires a session on NOT_FOUND or UNAUTHENTICATED, and fails it on a fatal status", () => {
      expect(decideStreamEnd(end(status.NOT_FOUND), established)).to.deep.equal({ action: "expire", why: "expired" });
      expect(decideStreamEnd(end(status.UNAUTHENTICATED), established)).to.deep.equal({
        action: "expire",
        why: "refused",
      });
      expect(decideStreamEnd(end(status.RESOURCE_EXHAUSTED), established)).to.deep.equal({ action: "fail" });
    });
  });
});
