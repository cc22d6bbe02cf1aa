import type { ScriptArg } from "../../../server/store/redis/scripts/runner/lock-scripts.js";
import { keys, LONG_TTL, type Publish, RETAIN_MS, type ScriptFixture } from "./script-fixture.js";

export interface AcquireSetInput {
  session: string;
  owner?: string;
  request?: string;
  ttl?: number;
  mayWait?: boolean;
  coord?: string;
  value?: string;
  publish?: Publish;
  /** Per name: 1 exclusive (default), 2 shared. */
  modes?: (1 | 2)[];
  /** Per name (default 0). */
  limits?: number[];
  /** Per name, the lock-delay ms its hold gets (0: none); absent: none sent. */
  lockDelays?: number[];
}

/** Runs acquire-set.lua over `names` (the script tests' Redis is no Cluster: any names go). */
export async function acquireSet(f: ScriptFixture, names: string[], a: AcquireSetInput): Promise<unknown[]> {
  const args: ScriptArg[] = [
    a.session,
    a.owner ?? "o",
    a.request ?? "set",
    a.ttl ?? LONG_TTL,
    a.mayWait === false ? 0 : 1,
  ];
  args.push(a.coord ?? "c1", RETAIN_MS, a.value ?? "", a.publish ?? "watched", "0 0", names.join("\n"));
  names.forEach((name, i) => {
    args.push(a.modes?.[i] ?? 1, a.limits?.[i] ?? 0, keys(name).events);
  });
  args.push(...(a.lockDelays ?? []));
  return (await f.scripts.run(
    "acquire-set",
    names.flatMap((n) => keys(n).all),
    args,
  )) as unknown[];
}
