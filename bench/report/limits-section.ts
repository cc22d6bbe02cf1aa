import type { BenchResults } from "../run-plan.js";
import { DISCIPLINE_TEXT } from "../workloads/hand-off.js";
import { busyCores, totalCpuUs } from "./cpu-per-cycle.js";
import { floorLockParagraph } from "./floor-lock-paragraph.js";
import { count, ms, usPer } from "./format.js";
import { handOffRedisHop, spreadRedisHop } from "./redis-hop.js";
import { GAP_FLOOR_RATIO } from "./targets.js";

/**
 * "What limits Turnstile here", written from this run's numbers: the round-trip floor under a
 * hand-off, CPU per cycle per process, and what that means for the targets.
 */
export function limitsSection(results: BenchResults): string {
  const out = ["## What limits Turnstile here", ""];
  const rt = results.roundTrips;
  // The discipline whose Turnstile gap is longer on average: the one the targets are judged on.
  const h8group = results.handOff
    .filter((h) => h.contenders === 8)
    .reduce<(typeof results.handOff)[number] | undefined>((worst, h) => {
      const gap = (g: typeof h | undefined) => g?.results.find((r) => r.impl === "turnstile")?.gap.meanMs ?? -1;
      return gap(h) > gap(worst) ? h : worst;
    }, undefined);
  const h8 = h8group?.results ?? [];
  const discipline = h8group ? ` (${DISCIPLINE_TEXT[h8group.discipline]}, the slower discipline here)` : "";
  const t = h8.find((r) => r.impl === "turnstile");
  const tEmbedded = h8.find((r) => r.impl === "turnstile-embedded");
  const spin = h8.find((r) => r.impl === "spin");
  const spreadTs = results.spread.find((s) => s.workers === 16)?.results.find((r) => r.impl === "turnstile");
  if (t && rt) {
    // The anatomy's echo server makes the hand-off's trip (client → server → Redis → server → client)
    // with nothing of Turnstile's on it: that is the floor. Without it, a keepalive (Turnstile's own path).
    const echo = results.anatomy?.floors.grpcEchoEval.roundTrip.p50Ms;
    const echoMean = results.anatomy?.floors.grpcEchoEval.roundTrip.meanMs;
    const floor = echo ?? rt.coordinatorKeepAlive.p50Ms;
    out.push(
      "**Hand-off gap.** A Turnstile hand-off is one coordinator round trip plus one Redis round trip: the",
      "release travels to the coordinator, its release script grants the head waiter inside Redis, and the",
      "coordinator pushes `Acquired` down the waiter's stream (client and waiter share this process, so both",
      "legs are on the clock).",
      echo === undefined
        ? `The bare round trips measured at the start of this run are ${ms(rt.redisPing.p50Ms)} ms p50 for a Redis PING and ${ms(rt.coordinatorKeepAlive.p50Ms)} ms p50 for a keepalive through the coordinator (run without the anatomy, this run has no floor without Turnstile's own message path on it).`
        : `The floor of that trip, measured in this run by the anatomy (a grpc-js echo server between two processes that runs one EVALSHA per message), is ${ms(echo)} ms p50; a keepalive through Turnstile's own message path took ${ms(rt.coordinatorKeepAlive.p50Ms)} ms p50.`,
      `The measured gap${discipline} is ${ms(t.gap.p50Ms)} ms p50 / ${ms(t.gap.meanMs)} ms mean with 8 contenders, ${ms(t.gap.p50Ms - floor)} ms (p50) above that floor${echo === undefined ? "." : ": the anatomy table above shows which legs hold it."}`,
      ...(spin && t.handOffsPerS > spin.handOffsPerS
        ? [
            `The spin lock's gap (${ms(spin.gap.p50Ms)} ms p50) is set by its 1 ms retry timer, which is why Turnstile still hands off faster.`,
          ]
        : spin
          ? [
              `The spin lock's gap is ${ms(spin.gap.p50Ms)} ms p50, set by its 1 ms retry timer and how many pollers are in flight.`,
            ]
          : []),
      ...handOffRedisHop(
        t,
        tEmbedded,
        echoMean !== undefined && h8group
          ? {
              ms: GAP_FLOOR_RATIO[h8group.discipline] * echoMean,
              what: `${GAP_FLOOR_RATIO[h8group.discipline]}× the echo + EVALSHA floor's mean`,
            }
          : undefined,
      ),
      "",
    );
    out.push(
      "**CPU per hand-off.** The path crosses three processes sharing two cores. Per hand-off with 8",
      `contenders${discipline} the coordinator used ${usPer(t.counters.serverCpuSeconds, t.handOffs)} µs of CPU, the clients' process`,
      `${usPer(t.counters.clientCpuSeconds, t.handOffs)} µs and Redis ${usPer(t.counters.redis?.cpuSeconds, t.handOffs)} µs.`,
      // An empty string would end the paragraph: leave the sentence out instead.
      ...(spreadTs
        ? [
            `An uncontended cycle in the spread workload (the same two requests, with the processes kept busy) cost the coordinator ${usPer(spreadTs.counters.serverCpuSeconds, spreadTs.cycles)} µs: the rest is the price of waking a sleeping process for every message, which one-at-a-time hand-offs pay at every hop.`,
          ]
        : []),
      "A gap's p99 is a hop that waited for a core (three busy processes, two cores) or for a garbage collection.",
      "",
    );
  }
  out.push(...floorLockParagraph(results));
  const s16 = results.spread.find((s) => s.workers === 16)?.results ?? [];
  const ts = s16.find((r) => r.impl === "turnstile");
  const sem = s16.find((r) => r.impl === "redis-semaphore");
  const tsEmbedded = s16.find((r) => r.impl === "turnstile-embedded");
  if (ts && sem) {
    const tTotal = totalCpuUs(ts.counters, ts.cycles);
    const sTotal = totalCpuUs(sem.counters, sem.cycles);
    out.push(
      "**Uncontended throughput (spread).** Each worker waits for every answer, so throughput follows the CPU a",
      `cycle costs summed over the processes on its path. ${count(busyCores(ts.counters), 2)} cores' worth of CPU were busy for Turnstile:`,
      Math.abs(ts.cyclesPerS * tTotal - 1e6) < 0.3e6
        ? `its ${count(ts.cyclesPerS)} cycles/s is about one core divided by that sum (${count(1e6 / tTotal)} cycles/s), so its processes mostly take turns on each batch of messages rather than overlapping.`
        : `its ${count(ts.cyclesPerS)} cycles/s against one core divided by that sum (${count(1e6 / tTotal)} cycles/s).`,
      `A Turnstile cycle (acquire + release, 16 workers) cost ${count(tTotal)} µs of CPU in total`,
      `(coordinator ${usPer(ts.counters.serverCpuSeconds, ts.cycles)}, clients ${usPer(ts.counters.clientCpuSeconds, ts.cycles)},`,
      `Redis ${usPer(ts.counters.redis?.cpuSeconds, ts.cycles)}); a redis-semaphore cycle ${count(sTotal)} µs (clients`,
      `${usPer(sem.counters.clientCpuSeconds, sem.cycles)}, Redis ${usPer(sem.counters.redis?.cpuSeconds, sem.cycles)}). That is ${count(tTotal / sTotal, 1)}× the CPU, against a`,
      `throughput ratio of ${count(sem.cyclesPerS / ts.cyclesPerS, 1)}×. Turnstile sends two gRPC messages each way through grpc-js and`,
      "HTTP/2 in two Node processes, and its scripts purge expired entries and keep the FIFO queue and fencing",
      `counter (${count((ts.counters.redis?.commands ?? 0) / ts.cycles, 0)} Redis calls per cycle inside the scripts, against`,
      `${count((sem.counters.redis?.commands ?? 0) / sem.cycles, 0)}); redis-semaphore sends one SET NX and one compare-and-delete straight`,
      "to Redis.",
      ...(tsEmbedded
        ? spreadRedisHop(ts, tsEmbedded, sem)
        : [
            "Matching it would take a coordinator that costs less than a direct Redis client per request,",
            "which an extra Node hop cannot do on this machine: the spread target is not reachable by a local fix.",
          ]),
      "For that CPU Turnstile gives FIFO hand-off with no polling, fencing tokens and told-first leases.",
      "",
    );
  } else if (ts && tsEmbedded)
    out.push("**Uncontended throughput (spread), 16 workers.**", ...spreadRedisHop(ts, tsEmbedded), "");
  const f = results.fleet;
  if (f?.coordinatorCpuPct !== undefined && f.renewedLocksPerS > 0) {
    const usPerRenewal = (f.coordinatorCpuPct / 100 / f.renewedLocksPerS) * 1e6;
    out.push(
      `**Idle fleet.** A keepalive renews all of its session's locks with one script: ${count(f.renewScriptsPerS)} scripts/s renewing ${count(f.renewedLocksPerS)} locks/s (${count(f.locks)} locks at a ${f.ttlMs / 1000} s TTL),`,
      `about ${count(usPerRenewal)} µs of coordinator CPU per renewed lock (keepalive handling included). At that cost one coordinator core`,
      `renews about ${count(1e6 / usPerRenewal)} locks per second, so the fleet a coordinator can hold scales with the TTL:`,
      "a shorter TTL or more locks per coordinator needs more coordinators (they share nothing but Redis).",
      `The keepalive round trip's tail (${ms(f.rtt.p99Ms)} ms p99) includes the sessions' own process, whose event loop lagged`,
      `${ms(f.clientLoopDelayP99Ms)} ms at p99 while running ${count(f.sessions)} sessions.`,
      "",
    );
  }
  out.push(
    "**Profile.** `npm run bench -- --only turnstile,turnstile-embedded --fleet-sessions 0 --profile DIR` runs",
    "both coordinators under `node --cpu-prof` and adds a breakdown of their CPU time by category, side by side,",
    "to the report it writes: what only the one on Redis spends is its store's path.",
  );
  // Each paragraph's lines are joined into one line; empty strings separate paragraphs.
  const paragraphs: string[][] = [[]];
  for (const line of out) {
    if (line === "") paragraphs.push([]);
    else paragraphs[paragraphs.length - 1].push(line);
  }
  return paragraphs
    .filter((p) => p.length > 0)
    .map((p) => (p[0].startsWith("#") ? p.join("\n") : p.join(" ")))
    .join("\n\n");
}
