// One pod of the rolling-deploy test (test/client/rolling-deploy.test.ts) in its own process: an election
// candidate of some version that leads while elected. Usage:
//   node --import tsx deploy-pod-child.ts ADDRESS NAME TTL_MS POD VERSION MODE
// MODE "recipe" (docs/elections.md): campaigns at priority VERSION and asks the leader to yield, saying its
// version; while leading it hands over to an asking candidate of a newer version, and on "stop" hands over
// to the head of the queue. MODE "plain": campaigns FIFO and on "stop" resigns. Prints one JSON line per
// event, stamped `atNs` with process.hrtime.bigint() (the machine's one monotonic clock, shared with the
// test's observers): "campaigning", "elected" (token), "ends" (it stops acting as leader: logged before the
// transfer or resign is sent), "handed-over" (the successor's token), "stopped" (then it exits).
import { createInterface } from "node:readline";
import { type Leadership, type ReleaseRequest, TurnstileClient, TurnstileError } from "../../client/index.js";

const [address, name, ttl, pod, versionText, mode] = process.argv.slice(2);
const version = Number(versionText);
const recipe = mode === "recipe";
const client = new TurnstileClient(address, { ttlMs: Number(ttl), clientName: pod });
const say = (o: object) =>
  process.stdout.write(`${JSON.stringify({ ...o, pod, atNs: String(process.hrtime.bigint()) })}\n`);
let leadership: Leadership | undefined;
// One step at a time: a hand-over asked for and the stop never overlap.
let steps: Promise<void> = Promise.resolve();
const serially = (step: () => Promise<void>) => {
  steps = steps.then(step, step);
  return steps;
};

/** Stops leading: hands over to `to` (recipe; "" the head of the queue), or resigns. */
async function stepDown(to: string | undefined): Promise<void> {
  const leading = leadership;
  if (!leading || leading.signal.aborted) return;
  leadership = undefined;
  say({ event: "ends", token: String(leading.fencingToken) });
  if (to === undefined) return leading.resign();
  try {
    const successor = await leading.handOver(to);
    say({ event: "handed-over", token: String(successor.fencingToken) });
  } catch (error) {
    // Nobody (newer) waits any more: let go instead.
    if (!(error instanceof TurnstileError && error.reason === "not-found")) throw error;
    await leading.resign();
  }
}

if (recipe) {
  client.on("releaseRequested", (request: ReleaseRequest) => {
    const asking = Number(/^version (\d+)$/.exec(request.reason)?.[1] ?? -1);
    // The holder decides: only a newer version takes over; its own version's candidates wait their turn.
    if (asking > version && request.sessionId) void serially(() => stepDown(request.sessionId));
  });
}

say({ event: "campaigning" });
client
  .election(name)
  .campaign(pod, recipe ? { priority: version, askToYield: `version ${version}` } : {})
  .then(
    (l) => {
      leadership = l;
      say({ event: "elected", token: String(l.fencingToken) });
    },
    (error: Error) => say({ event: "campaign-failed", error: error.message }),
  );

for await (const line of createInterface({ input: process.stdin })) {
  if (line === "stop") {
    await serially(() => stepDown(recipe ? "" : undefined));
    await client.close();
    say({ event: "stopped" });
    process.exit(0);
  }
}
