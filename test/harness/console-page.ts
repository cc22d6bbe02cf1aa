import { existsSync } from "node:fs";
import type { Page } from "playwright-core";
import { browserRequired, CHROMIUM, launchChromium } from "./chromium.js";
import { CONSOLE_TOKENS, startConsole, type TestConsole } from "./console-server.js";
import { startRedis, type TestRedis } from "./redis-server.js";

/** Reads `read` every 100 ms until `ok` accepts its answer; fails naming `what` and the last answer after `timeoutMs`. */
export async function untilRead<T>(
  read: () => Promise<T>,
  ok: (value: T) => boolean,
  what: string,
  timeoutMs = 15_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (ok(value)) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; last saw ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** The text of every cell of one of the console's tables (`locks`, `holders`, `waiters`), row by row. */
export const cells = (page: Page, table: string): Promise<string[][]> =>
  page.$$eval(`#${table} tbody tr`, (rows) =>
    rows.map((r) => [...(r as HTMLTableRowElement).cells].map((c) => c.textContent ?? "")),
  );

/** One table cell as laid out: its full text, its hover title, and how many lines its text takes. */
export interface CellLayout {
  text: string;
  title: string;
  lines: number;
  cut: boolean;
}

/** How every cell of a console table is laid out (a Range over a text node gives one rectangle per line). */
export const cellLayouts = (page: Page, table: string): Promise<CellLayout[]> =>
  page.$$eval(`#${table} tbody td`, (tds) =>
    tds.map((td) => {
      const box = td.querySelector(".cell");
      const tops = new Set<number>();
      const texts = document.createTreeWalker(td, NodeFilter.SHOW_TEXT);
      for (let node = texts.nextNode(); node; node = texts.nextNode()) {
        const range = document.createRange();
        range.selectNodeContents(node);
        for (const r of range.getClientRects()) if (r.width > 0) tops.add(Math.round(r.top));
      }
      return {
        text: td.textContent ?? "",
        title: (td as HTMLElement).title,
        lines: tops.size,
        cut: box ? box.scrollWidth > box.clientWidth : false,
      };
    }),
  );

/** Signs the page in with `token` and waits until it names `identity`. */
export async function signIn(page: Page, token: string, identity: string): Promise<void> {
  await page.fill("#token", token);
  await page.click("#token-form button");
  await untilRead(
    () => page.textContent("#identity"),
    (t) => t === `signed in as ${identity}`,
    `sign-in as ${identity}`,
  );
}

/** A coordinator with its console on a real redis-server, and Debian's Chromium on the console's page. */
export interface ConsoleUnderTest {
  redis: TestRedis;
  web: TestConsole;
  page: Page;
  /** Closes the browser, the console and its coordinator, and stops redis-server. */
  close(): Promise<void>;
}

/**
 * For a browser suite's `before`: skips the suite (saying why) when Chromium is missing and CI does
 * not require it; otherwise starts redis-server, a console and Chromium, lets `prepare` attach its
 * page listeners, opens the page and signs in as the admin.
 */
export async function startConsoleInChromium(
  suite: Mocha.Context,
  prepare: (page: Page) => void = () => {},
): Promise<ConsoleUnderTest> {
  if (!browserRequired() && !existsSync(CHROMIUM)) {
    console.log(`      skipped: ${CHROMIUM} is missing (apt-get install chromium); CI=true makes this fail`);
    suite.skip();
  }
  const redis = await startRedis();
  const web = await startConsole(redis.url);
  const browser = await launchChromium();
  const page = browser.context.pages()[0] ?? (await browser.context.newPage());
  prepare(page);
  await page.goto(`${web.url}/`);
  await signIn(page, CONSOLE_TOKENS.admin, "ops-admin");
  return {
    redis,
    web,
    page,
    async close() {
      await browser.close();
      await web.stop();
      await redis.stop();
    },
  };
}
