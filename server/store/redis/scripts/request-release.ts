import type { ReleaseRequest } from "../../store.js";
import { releaseRequestChannel } from "../records/lock-keys.js";
import type { ScriptArg } from "./runner/lock-scripts.js";
import type { ScriptContext } from "./script-context.js";

/** request-release.lua's return codes, the first element of its reply `{code, holders asked}`. */
export enum RequestReleaseCode {
  /** Every live holder was asked; how many follows. */
  Asked = 61,
  /** Nobody holds a live lease on the lock. */
  NoHolder = 62,
}

/** request-release.lua's ARGV. */
export function requestReleaseArgs(context: ScriptContext, r: ReleaseRequest): ScriptArg[] {
  return [r.name, r.requester, r.reason, releaseRequestChannel(context.prefix)];
}

/** Translates request-release.lua's reply: the holders asked (0: nobody holds the lock); an unknown code throws. */
export function translateRequestRelease(reply: unknown[]): number {
  const [code, asked] = reply;
  if (code === RequestReleaseCode.Asked) return Number(asked);
  if (code === RequestReleaseCode.NoHolder) return 0;
  throw new Error(`unknown request-release.lua return code ${code}`);
}

/** Runs request-release.lua on the lock's holders and data keys, acknowledged; resolves with the holders asked. */
export async function runRequestRelease(context: ScriptContext, r: ReleaseRequest): Promise<number> {
  const [holders, data] = context.lockKeys.of(r.name).keys;
  return translateRequestRelease(
    (await context.run("request-release", [holders, data], requestReleaseArgs(context, r))) as unknown[],
  );
}
