import type { Store } from "../store/store.js";
import type { ConsoleAccess } from "./access/console-access.js";
import { LockViews } from "./lock-view.js";

/** Store List pages one console listing reads at most, so a prefix with few readable names stays cheap. */
export const MAX_LIST_PAGES = 4;
const PAGE_SIZE = 500;

/** What the page's lock list shows: the readable locks under a prefix, or why there are none. */
export interface ListView {
  prefix: string;
  locks: ReturnType<typeof LockViews.summary>[];
  /** True when more readable locks exist than were listed (narrow the prefix). */
  truncated: boolean;
}

/**
 * Lists the active locks under `prefix` that `identity` may read, sorted by name, at most `max` (the
 * first by name when the listing was read to its end; `truncated` otherwise, List pages come in no order):
 * names the caller may not read are dropped before anything leaves the coordinator.
 */
export async function readableLocks(
  store: Store,
  access: ConsoleAccess,
  identity: string,
  prefix: string,
  max: number,
): Promise<ListView> {
  const locks: ListView["locks"] = [];
  let token = "";
  for (let pages = 0; pages < MAX_LIST_PAGES; pages++) {
    const page = await store.list(prefix, PAGE_SIZE, token);
    if (page === "invalid-token") throw new Error("list: the store refused its own page token");
    for (const s of page.locks) if (access.may(identity, "read", s.name)) locks.push(LockViews.summary(s));
    token = page.nextPageToken;
    if (token === "" || locks.length > max) break;
  }
  locks.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return { prefix, locks: locks.slice(0, max), truncated: locks.length > max || token !== "" };
}
