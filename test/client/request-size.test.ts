import { expect } from "chai";
import { TurnstileClient, TurnstileError } from "../../client/index.js";
import { startRedis, type TestRedis } from "../harness/redis-server.js";
import { startCoordinator, type TestCoordinator } from "../harness/test-coordinator.js";

/** `work`'s rejection (fails the test if it resolves). */
async function rejection(work: Promise<unknown>): Promise<TurnstileError> {
  const err = await work.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err, "the call was refused").to.be.instanceOf(TurnstileError);
  return err as TurnstileError;
}

// A coordinator ends the whole session stream over a message past its --max-message-bytes (gRPC's
// RESOURCE_EXHAUSTED), which would cost the session every lock it holds: the client refuses the one
// request instead, before sending it.
describe("requests over the client's maxRequestBytes", () => {
  let redis: TestRedis;
  /** At the default limits, and with --max-message-bytes and --max-value-bytes raised. */
  let plain: TestCoordinator;
  let raised: TestCoordinator;
  const clients: TurnstileClient[] = [];
  const client = (coord: TestCoordinator, options: ConstructorParameters<typeof TurnstileClient>[1] = {}) => {
    const c = new TurnstileClient(coord.address, options);
    clients.push(c);
    return c;
  };

  before(async () => {
    redis = await startRedis();
    plain = await startCoordinator(redis.url);
    raised = await startCoordinator(redis.url, { maxMessageBytes: 256 * 1024, maxValueBytes: 128 * 1024 });
  });
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((c) => c.close()));
  });
  after(async () => {
    await plain.stop();
    await raised.stop();
    await redis.stop();
  });

  it("fails an acquire over the default 65536 bytes alone with 'invalid-argument' naming its size; the session and its lock go on", async () => {
    const c = client(plain);
    const held = await c.acquire("size/held");
    const session = c.sessionId;
    const err = await rejection(c.acquire("size/big", { value: Buffer.alloc(70_000) }));
    expect(err.reason).to.equal("invalid-argument");
    expect(err.message).to.match(
      /^acquire request: 700\d\d bytes, over the 65536-byte maximum a coordinator reads \(serve --max-message-bytes; client option maxRequestBytes\); nothing was sent$/,
    );
    expect(held.lost).to.equal(false);
    const next = await c.acquire("size/next");
    expect(c.sessionId).to.equal(session);
    await next.release();
    await held.release();
  });

  it("sends as much as maxRequestBytes allows, for a coordinator whose --max-message-bytes is raised to match", async () => {
    const c = client(raised, { maxRequestBytes: 256 * 1024 });
    const lock = await c.acquire("size/raised", { value: Buffer.alloc(70_000) });
    await lock.release();
  });

  it("sends the session's open whatever its size: only requests are refused (a resume's open lists every hold)", async () => {
    const c = client(plain, { maxRequestBytes: 8, openTimeoutMs: 2000 });
    await c.connect({ signal: AbortSignal.timeout(10_000) });
    const err = await rejection(c.acquire("size/tiny"));
    expect([err.reason, c.state]).to.deep.equal(["invalid-argument", "connected"]);
  });

  it("refuses a maxRequestBytes that is not a positive integer", () => {
    for (const bad of [0, -1, 1.5, Number.NaN]) {
      expect(() => new TurnstileClient("127.0.0.1:1", { maxRequestBytes: bad }), String(bad)).to.throw(
        TurnstileError,
        /maxRequestBytes must be a positive integer/,
      );
    }
  });
});
