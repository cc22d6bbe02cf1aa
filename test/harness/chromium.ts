import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type BrowserContext, chromium } from "playwright-core";

/** Debian's chromium package; playwright-core drives it (no browser is ever downloaded). */
export const CHROMIUM = "/usr/bin/chromium";

/** True when a missing browser must fail the run (CI), not skip the browser tests. */
export const browserRequired = (): boolean =>
  process.env.CI === "true" || process.env.TURNSTILE_REQUIRE_BROWSER === "1";

/** A headless Chromium with a new, empty profile directory, removed again by `close`. */
export async function launchChromium(): Promise<{ context: BrowserContext; close(): Promise<void> }> {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: sudo apt-get install -y chromium`);
  const profile = mkdtempSync(join(tmpdir(), "turnstile-chromium-"));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    viewport: { width: 1280, height: 600 },
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
  return {
    context,
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
