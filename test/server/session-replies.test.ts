import { expect } from "chai";
import type { SessionResponse } from "../../gen/ts/turnstile/v1/turnstile.js";
import { type GrantProofs, SessionReplies } from "../../server/edge/replies/session-replies.js";

/**
 * Proofs whose thread-pool signatures wait until the test hands back their result; signatures on the
 * event loop return `name#token` at once and are recorded in `now`.
 */
function heldProofs() {
  const pending: Array<{ name: string; done: (err: Error | null, proof: string) => void }> = [];
  const now: string[] = [];
  const proof: GrantProofs = {
    later: (name, _token, _owner, done) => {
      pending.push({ name, done });
    },
    now: (name, token) => {
      now.push(`${name}#${token}`);
      return `${name}#${token}`;
    },
  };
  return { pending, now, proof };
}

/** Resolves after the setImmediate callbacks queued so far have run. */
const nextCheckPhase = () => new Promise<void>((resolve) => setImmediate(resolve));

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

  it("signs an expected grant's proof in the next check phase, uses it for that grant and signs no second time", async () => {
    const written: SessionResponse[] = [];
    const proofs = heldProofs();
    const replies = new SessionReplies((r) => written.push(r), proofs.proof);
    replies.expectGrant("r1", "a", 8n, "o");
    expect(proofs.now, "not in the turn that handed the release to the store").to.deep.equal([]);
    await nextCheckPhase();
    expect(proofs.now).to.deep.equal(["a#8"]);
    replies.granted("r1", "a", 8n, 1, "o");
    const kind = written[0]?.kind;
    expect(kind?.$case === "acquired" && kind.acquired.fencingProof, "written at once").to.equal("a#8");
    expect(proofs.pending, "no thread-pool signature").to.have.length(0);
  });

  it("holds a grant that comes before its proof signed ahead, and writes it once signed", async () => {
    const written: SessionResponse[] = [];
    const proofs = heldProofs();
    const replies = new SessionReplies((r) => written.push(r), proofs.proof);
    replies.expectGrant("r1", "a", 8n, "o");
    replies.granted("r1", "a", 8n, 1, "o");
    replies.queued("r2", "b", 1);
    expect(written).to.deep.equal([]);
    await nextCheckPhase();
    expect(written.map((r) => r.kind?.$case)).to.deep.equal(["acquired", "queued"]);
    expect(proofs.now).to.deep.equal(["a#8"]);
  });

  it("signs afresh when the grant is not the one expected, and skips the proof ahead once the grant is answered", async () => {
    const written: SessionResponse[] = [];
    const proofs = heldProofs();
    const replies = new SessionReplies((r) => written.push(r), proofs.proof);
    replies.expectGrant("r1", "a", 8n, "o");
    replies.granted("r1", "a", 12n, 1, "o");
    expect(proofs.pending).to.have.length(1);
    proofs.pending[0]!.done(null, "for-token-12");
    const kind = written[0]?.kind;
    expect(kind?.$case === "acquired" && kind.acquired.fencingProof).to.equal("for-token-12");
    await nextCheckPhase();
    expect(proofs.now, "the proof for token 8 is never signed").to.deep.equal([]);
  });
});
