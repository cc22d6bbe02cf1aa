import { BUSY_STREAMS, type EchoLegs } from "../anatomy/floors.js";
import type { AnatomyHandOff, AnatomyResult, ChainSummary } from "../anatomy/run-anatomy.js";
import type { LatencySummary } from "../stats.js";
import { DISCIPLINE_TEXT } from "../workloads/hand-off.js";
import { count, table } from "./format.js";

/** The legs of both chains (hand-off and uncontended acquire follow the same eleven steps). */
const LEGS = [
  "client: release() / acquire() called → request written",
  "request written → coordinator starts decoding it (HTTP/2, sockets, scheduling)",
  "coordinator: decoding (protobuf + strict-wire check)",
  "coordinator: decoded → session stream reads it (grpc-js delivery)",
  "coordinator: read → admitted (admission lane)",
  "coordinator: admitted → script handed to ioredis",
  "script handed over → Redis socket written (uncorked at the end of its tick)",
  "socket written → script answered",
  "coordinator: answered → grant written",
  "grant written → client reads it (the waiter, in a hand-off)",
  "client: reads the grant → acquire resolves",
];

/** Indexes of the coordinator's own legs (decode → … → script handed over; answered → grant written). */
export const COORDINATOR_LEGS = [2, 3, 4, 5, 8];
/** Indexes of the client's own legs (call → request written; grant read → acquire resolved). */
export const CLIENT_LEGS = [0, 10];

/**
 * The floor of each leg: a measured one, "zero" where the echo server has no such step (raw bytes,
 * no decoding; EVALSHA sent at once, no cork), or none (the client's own legs).
 */
function legFloors(result: AnatomyResult): (LatencySummary | "zero" | undefined)[] {
  const f = result.floors;
  const z = "zero" as const;
  return [undefined, f.grpcEcho.toServer, z, z, z, z, z, f.grpcEchoEval.script, z, f.grpcEcho.toClient, undefined];
}

/** µs from ms, no decimals. */
function us(ms: number | undefined): string {
  return ms === undefined || !Number.isFinite(ms) ? "–" : count(ms * 1000);
}

/** One leg that holds time: its name, its value and its floor's (µs). */
export interface HeldLeg {
  leg: string;
  us: number;
  floorUs: number;
}

/** The hand-off of the discipline whose whole trip is slower on average: what a target is judged on. */
export function worstHandOff(result: AnatomyResult): AnatomyHandOff {
  return result.handOffs.reduce((a, b) => (b.chain.total.meanMs > a.chain.total.meanMs ? b : a));
}

/**
 * The hand-off legs ordered by how far they sit above their floor (at the median or the p99): the
 * legs that hold a hand-off's time (of the slower discipline unless `chain` says). A leg with no
 * measured floor counts from zero.
 */
export function legsAboveFloor(
  result: AnatomyResult,
  at: "p50Ms" | "p99Ms",
  chain = worstHandOff(result).chain,
): HeldLeg[] {
  const floors = legFloors(result);
  return chain.legs
    .map((l, i) => {
      const floor = floors[i];
      const floorMs = floor === undefined || floor === "zero" ? 0 : floor[at];
      return { leg: LEGS[i], us: l.summary[at] * 1000, floorUs: floorMs * 1000 };
    })
    .filter((l) => Number.isFinite(l.us))
    .sort((a, b) => b.us - b.floorUs - (a.us - a.floorUs));
}

/**
 * "leg (n µs, floor m µs)" for the leg that holds the most at `at` (in `chain`, by default the slower
 * discipline's hand-off): the targets table's pointer.
 */
export function heldByText(result: AnatomyResult | undefined, at: "p50Ms" | "p99Ms", chain?: ChainSummary): string {
  if (!result) return "";
  const top = legsAboveFloor(result, at, chain ?? worstHandOff(result).chain)[0];
  if (!top) return "";
  const which = at === "p50Ms" ? "median" : "p99";
  return `anatomy: *${top.leg}*, ${count(top.us)} µs ${which} (floor ${count(top.floorUs)})`;
}

/**
 * Where the at-once discipline's extra time goes: the legs whose mean grew most from the after-turn
 * hand-off to the at-once one (leg means add up to the whole trip's mean), largest first.
 */
export function atOnceExtra(
  result: AnatomyResult,
): { totalUs: number; legs: { leg: string; us: number }[] } | undefined {
  const atOnce = result.handOffs.find((h) => h.discipline === "at-once")?.chain;
  const afterTurn = result.handOffs.find((h) => h.discipline === "after-turn")?.chain;
  if (!atOnce || !afterTurn) return undefined;
  const legs = LEGS.map((leg, i) => ({
    leg,
    us: ((atOnce.legs[i]?.summary.meanMs ?? Number.NaN) - (afterTurn.legs[i]?.summary.meanMs ?? Number.NaN)) * 1000,
  }))
    .filter((l) => Number.isFinite(l.us))
    .sort((a, b) => b.us - a.us);
  return { totalUs: (atOnce.total.meanMs - afterTurn.total.meanMs) * 1000, legs };
}

function floorText(f: LatencySummary | "zero" | undefined, at: "p50Ms" | "p99Ms"): string {
  return f === undefined ? "–" : f === "zero" ? "≈ 0" : us(f[at]);
}

function legTable(result: AnatomyResult): string {
  const floors = legFloors(result);
  const hs = result.handOffs.map((h) => h.chain);
  const u = result.uncontended;
  const rows = LEGS.map((leg, i) => [
    leg,
    ...hs.flatMap((h) => [us(h.legs[i]?.summary.p50Ms), us(h.legs[i]?.summary.meanMs), us(h.legs[i]?.summary.p99Ms)]),
    us(u.legs[i]?.summary.p50Ms),
    us(u.legs[i]?.summary.p99Ms),
    floorText(floors[i], "p50Ms"),
    floorText(floors[i], "p99Ms"),
  ]);
  const f = result.floors.grpcEchoEval.roundTrip;
  rows.push([
    "**whole trip** (release()/acquire() called → acquire resolves)",
    ...hs.flatMap((h) => [us(h.total.p50Ms), us(h.total.meanMs), us(h.total.p99Ms)]),
    us(u.total.p50Ms),
    us(u.total.p99Ms),
    us(f.p50Ms),
    us(f.p99Ms),
  ]);
  const head = [
    "leg",
    ...result.handOffs.flatMap((h) => [`hand-off, ${h.discipline}: median µs`, "mean µs", "p99 µs"]),
    "uncontended acquire median µs",
    "p99 µs",
    "floor median µs",
    "p99 µs",
  ];
  return table(head, rows);
}

function echoRows(label: string, e: EchoLegs, withScript: boolean): string[][] {
  const row = (what: string, s: LatencySummary) => [`${label}: ${what}`, us(s.p50Ms), us(s.p99Ms), us(s.meanMs)];
  return [
    row("round trip", e.roundTrip),
    row("client write → server reads it", e.toServer),
    ...(withScript ? [row("EVALSHA in the server, handed to ioredis → answered", e.script)] : []),
    row("server writes → client reads it", e.toClient),
  ];
}

function floorTable(result: AnatomyResult): string {
  const f = result.floors;
  const rows = [
    ...echoRows("grpc-js bidi echo between two processes", f.grpcEcho, false),
    [
      "one EVALSHA of a two-call script from the bench process (ioredis)",
      us(f.evalsha.p50Ms),
      us(f.evalsha.p99Ms),
      us(f.evalsha.meanMs),
    ],
    ...echoRows("echo server running one EVALSHA per message", f.grpcEchoEval, true),
  ];
  return table(["floor", "median µs", "p99 µs", "mean µs"], rows);
}

/** The CPU the floors' trips cost each process: what a request costs on this machine before any lock work. */
function floorCpuTable(result: AnatomyResult): string {
  const f = result.floors;
  const row = (what: string, server: string, client: string) => [what, server, client];
  return table(
    ["floor trip", "server process CPU µs per trip", "client process CPU µs per trip"],
    [
      row("grpc-js bidi echo", count(f.grpcEcho.cpuUs.server), count(f.grpcEcho.cpuUs.client)),
      row("one EVALSHA from the bench process (ioredis)", "–", count(f.evalshaCpuUs)),
      row(
        "echo server running one EVALSHA per message",
        count(f.grpcEchoEval.cpuUs.server),
        count(f.grpcEchoEval.cpuUs.client),
      ),
      row(
        `the same with ${BUSY_STREAMS} streams, each with one trip in flight`,
        count(f.busyEchoEvalCpuUs.server),
        count(f.busyEchoEvalCpuUs.client),
      ),
    ],
  );
}

function holdsParagraph(result: AnatomyResult): string {
  const worst = worstHandOff(result);
  const h = worst.chain;
  const floor = result.floors.grpcEchoEval.roundTrip;
  const top = (at: "p50Ms" | "p99Ms", chain: ChainSummary) =>
    legsAboveFloor(result, at, chain)
      .slice(0, 3)
      .map((l) => `*${l.leg}* (${count(l.us)} µs, ${count(l.us - l.floorUs)} above its floor)`)
      .join(", ");
  const extra = atOnceExtra(result);
  return [
    `**What holds the time.** A hand-off ${DISCIPLINE_TEXT[worst.discipline]} (the slower discipline here) took ${us(h.total.p50Ms)} µs median / ${us(h.total.p99Ms)} µs p99 from release() to the`,
    `waiter's resolved acquire, against ${us(floor.p50Ms)} µs median for the same client → server → Redis → server → client`,
    `trip through the minimal echo server (${count(h.total.p50Ms / floor.p50Ms, 1)}× the floor). At the median the legs furthest`,
    `above their floor are ${top("p50Ms", h)}; at p99 ${top("p99Ms", h)}.`,
    ...(extra
      ? [
          `Released at once, the whole trip's mean is ${count(Math.abs(extra.totalUs))} µs ${extra.totalUs >= 0 ? "longer" : "shorter"} than released after a turn; the legs`,
          `whose mean ${extra.totalUs >= 0 ? "grew" : "shrank"} most are ${(extra.totalUs >= 0
            ? extra.legs
            : [...extra.legs].reverse()
          )
            .slice(0, 3)
            .map((l) => `*${l.leg}* (${l.us >= 0 ? "+" : "−"}${count(Math.abs(l.us))} µs)`)
            .join(", ")}.`,
        ]
      : []),
    `An uncontended acquire took ${us(result.uncontended.total.p50Ms)} µs median; its legs furthest above their floor are`,
    `${top("p50Ms", result.uncontended)}.`,
  ].join(" ");
}

/**
 * The anatomy section of BENCHMARKS.md: how it was measured, the legs of a hand-off and of an
 * uncontended acquire beside their floors, the floors themselves, and which legs hold the time.
 */
export function anatomySection(result: AnatomyResult): string {
  const runs = result.handOffs.map(({ discipline, chain, run }) => {
    const cpuUs =
      run.counters.serverCpuSeconds === undefined ? undefined : (run.counters.serverCpuSeconds * 1e6) / run.handOffs;
    return (
      `${DISCIPLINE_TEXT[discipline]}: ${count(chain.followed)} hand-offs followed (${count(chain.unmatched)} with a mark missing, left out); ` +
      `with the marks recorded that run handed off ${count(run.handOffsPerS)}/s, gap mean ${us(run.gap.meanMs)} µs, p99 ${us(run.gap.p99Ms)} µs, ` +
      `coordinator CPU ${count(cpuUs)} µs per hand-off.`
    );
  });
  return [
    "## Anatomy of a hand-off",
    "",
    "Timestamps on the machine's one monotonic clock (`process.hrtime.bigint()`, CLOCK_MONOTONIC, shared by",
    "every process here) at each point of a request's path: the client and the coordinator publish them on",
    "`node:diagnostics_channel` channels (`client/session/wire-marks.ts`, `server/tracing/wire-marks.ts`; nothing is",
    "published while nobody subscribes). A separate coordinator process records its marks (loaded with",
    "`--import bench/anatomy/record-coordinator-marks.ts`) while the bench process records the clients';",
    "`bench/anatomy/leg-chains.ts` follows each operation across both by session and request id. The hand-off run",
    `is the hand-off workload (${result.contenders} contenders, one process) in each discipline; the uncontended acquire is one worker's`,
    "acquire → release loop on its own lock. The floors are measured in the same run, on the same Redis, between",
    "the bench process and `bench/anatomy/echo-server.ts` (grpc-js on raw bytes, no protobuf; ioredis EVALSHA).",
    "`npx tsx bench/anatomy/main.ts` runs this section alone. The scripts one tick of the coordinator hands over",
    "(one session message's work) are written to Redis together at the end of that tick, in one socket write with",
    "the releases in front (docs/architecture.md, Releases first), so that leg holds the rest of the message's",
    "handling after the script was handed over, never the other messages read in the same turn.",
    "",
    ...runs.map((r) => `- ${r}`),
    `- Uncontended acquires followed: ${count(result.uncontended.followed)} (${count(result.uncontended.unmatched)} left out).`,
    "",
    legTable(result),
    "",
    floorTable(result),
    "",
    "CPU per floor trip (`process.cpuUsage()` of each process over the same trips; the echo server reports its own).",
    `One trip at a time pays an idle process's wake-ups on every message; with ${BUSY_STREAMS} streams in flight, as the`,
    "hand-off's 8 contenders keep the coordinator busy, they are shared. A hand-off makes two request → script →",
    "answer trips through the coordinator (the release that grants, the next acquire that queues) and pushes one",
    "more answer (the grant), so two busy echo + EVALSHA trips are a floor under its CPU per hand-off here:",
    "",
    floorCpuTable(result),
    "",
    holdsParagraph(result),
  ].join("\n");
}
