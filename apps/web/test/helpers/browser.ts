import { existsSync, mkdirSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { type Browser, chromium, type Page } from "playwright-core";

const here = dirname(fileURLToPath(import.meta.url));

/** Screenshots of the end-to-end tests: `apps/web/test-results/screenshots/`. */
export const SCREENSHOTS = resolve(here, "../../test-results/screenshots");

/** Debian's chromium (installed by `.ci/run`), or `$CHROMIUM_PATH`. No browser is downloaded. */
export function chromiumPath(): string {
  const candidates = [process.env.CHROMIUM_PATH, "/usr/bin/chromium", "/usr/bin/chromium-browser"];
  const found = candidates.find((p): p is string => p !== undefined && p !== "" && existsSync(p));
  if (found === undefined) {
    throw new Error(
      "No chromium found: install Debian's chromium (apt-get install chromium) or set CHROMIUM_PATH",
    );
  }
  return found;
}

export async function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: chromiumPath(),
    headless: true,
    // Root (CI) cannot use Chromium's sandbox; /dev/shm is small in containers.
    args: ["--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu"],
  });
}

/** Saves a full-page screenshot named `name.png`. */
export async function screenshot(page: Page, name: string): Promise<string> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  const path = join(SCREENSHOTS, `${name}.png`);
  await page.screenshot({ path, fullPage: true });
  return path;
}
