import { expect } from "chai";
import type { SessionResponse } from "../../gen/ts/turnstile/v1/turnstile.js";
import { SessionReplies } from "../../server/edge/replies/session-replies.js";

/** A proof source that holds each signature until the test hands back its result. */
function heldProofs() {
  const pending: Array<{ name: string; done: (err: Error | null, proof: string) => void }> = [];
  const proof = (name: string, _token: bigint, _owner: string, done: (err: Error | null, proof: string) => void) => {
    pending.push({ name, done });
  };
  return { pending, proof };
}

describe("SessionReplies: replies keep their order while a fencing proof is signed", () => {
  it("writes a grant's later replies behind it, then all in call order once its proof is signed", () => {
    const written: SessionResponse[] = [];
    const proofs = heldProofs();
    const replies = new SessionReplies((r) => written.push(r), proofs.proof);
    replies.granted("r1", "a", 7n, 1, "o");
    replies.lost("a", "o", 7n, "revoked");
    replies.queued("r2", "b", 1);
    expect(written, "nothing passes a grant whose proof is unsigned").to.deep.equal([]);
    proofs.pending[0]!.done(null, "header.claims.signature");
    expect(written.map((r) => r.kind?.$case)).to.deep.equal(["acquired", "lost", "queued"]);
    const first = written[0]!.kind;
    expect(first?.$case === "acquired" && first.acquired.fencingProof).to.equal("header.claims.signature");
  });

  it("writes a set's grant once every lock's proof is signed, in whatever order they finish", () => {
    const written: SessionResponse[] = [];
    const proofs = heldProofs();
    const replies = new SessionReplies((r) => written.push(r), proofs.proof);
    replies.grantedSet(
      "r1",
      [
        { name: "s1", token: 1n },
        { name: "s2", token: 2n },
      ],
      "o",
    );
    replies.released("r0", "x", 0);
    proofs.pending[1]!.done(null, "p2");
    expect(written).to.deep.equal([]);
    proofs.pending[0]!.done(null, "p1");
    const kinds = written.map((r) => r.kind);
    expect(kinds.map((k) => k?.$case)).to.deep.equal(["acquiredAll", "released"]);
    const set = kinds[0];
    expect(set?.$case === "acquiredAll" && set.acquiredAll.locks.map((l) => l.fencingProof)).to.deep.equal([
      "p1",
      "p2",
    ]);
  });

  it("writes at once, and signs nothing, without a fencing key", () => {
    const written: SessionResponse[] = [];
    const replies = new SessionReplies((r) => written.push(r));
    replies.granted("r1", "a", 7n, 1, "o");
    const kind = written[0]?.kind;
    expect(kind?.$case === "acquired" && kind.acquired.fencingProof).to.equal("");
  });

  it("drops the grant and what waits behind it when signing fails, and tells signFailed", async () => {
    const written: SessionResponse[] = [];
    const failures: Error[] = [];
    const proofs = heldProofs();
    const replies = new SessionReplies(
      (r) => written.push(r),
      proofs.proof,
      (err) => failures.push(err),
    );
    replies.granted("r1", "a", 7n, 1, "o");
    replies.queued("r2", "b", 1);
    const drained = replies.drained();
    proofs.pending[0]!.done(new Error("sign failed"), "");
    await drained;
    expect(written).to.deep.equal([]);
    expect(failures.map((e) => e.message)).to.deep.equal(["sign failed"]);
  });

  it("resolves drained() once the last held reply is written", async () => {
    const written: SessionResponse[] = [];
    const proofs = heldProofs();
    const replies = new SessionReplies((r) => written.push(r), proofs.proof);
    await replies.drained();
    replies.granted("r1", "a", 7n, 1, "o");
    let drained = false;
    const waiting = replies.drained().then(() => {
      drained = true;
    });
    await Promise.resolve();
    expect(drained).to.equal(false);
    proofs.pending[0]!.done(null, "p");
    await waiting;
    expect(written).to.have.length(1);
  });

  it("uses a proof signed ahead for the grant it expected, waiting for it if still signing, and signs no second time", () => {
    const written: SessionResponse[] = [];
    const proofs = heldProofs();
    const replies = new SessionReplies((r) => written.push(r), proofs.proof);
    replies.expectGrant("r1", "a", 8n, "o");
    expect(proofs.pending).to.have.length(1);
    replies.granted("r1", "a", 8n, 1, "o");
    expect(written, "the grant waits for the proof signed ahead").to.deep.equal([]);
    proofs.pending[0]!.done(null, "ahead");
    expect(proofs.pending, "no second signature").to.have.length(1);
    const kind = written[0]?.kind;
    expect(kind?.$case === "acquired" && kind.acquired.fencingProof).to.equal("ahead");

    replies.expectGrant("r2", "a", 9n, "o");
    proofs.pending[1]!.done(null, "ready");
    replies.granted("r2", "a", 9n, 1, "o");
    const next = written[1]?.kind;
    expect(next?.$case === "acquired" && next.acquired.fencingProof, "written at once").to.equal("ready");
  });

  it("signs afresh when the grant is not the one expected (another token or owner)", () => {
    const written: SessionResponse[] = [];
    const proofs = heldProofs();
    const replies = new SessionReplies((r) => written.push(r), proofs.proof);
    replies.expectGrant("r1", "a", 8n, "o");
    proofs.pending[0]!.done(null, "for-token-8");
    replies.granted("r1", "a", 12n, 1, "o");
    expect(proofs.pending).to.have.length(2);
    proofs.pending[1]!.done(null, "for-token-12");
    const kind = written[0]?.kind;
    expect(kind?.$case === "acquired" && kind.acquired.fencingProof).to.equal("for-token-12");
  });
});
