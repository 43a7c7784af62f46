/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
// The callbacks given to page.evaluate run in Chromium: DOM types for them.
import { chmodSync, copyFileSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningSessionBrowser, serveSessionBrowser } from "../dist/index.js";
import { appendElsewhere } from "./helpers/append-elsewhere.js";
import { launchBrowser, screenshot } from "./helpers/browser.js";
import { seededCopy, type WebSeed } from "./helpers/seed-web-database.js";
import { fileState, SAMPLE_DB } from "./helpers/temp.js";

// The session browser in a real Chromium (Debian's, through playwright-core): what a user does,
// on a seeded database, with a screenshot of each page under test-results/screenshots.

let browser: Browser;
let context: BrowserContext;
let server: RunningSessionBrowser;
let dbPath: string;
let seed: WebSeed;
let before: ReturnType<typeof fileState>;
const pageErrors: string[] = [];
/** `expect.poll`'s 1 s default is short for a page load on a loaded machine. */
const POLL = { timeout: 15_000 };

// The databases live for the whole file (not per test): one folder, removed at the end.
const folder = mkdtempSync(join(tmpdir(), "hermes-web-e2e-"));

beforeAll(async () => {
  ({ path: dbPath, seed } = await seededCopy(mkdtempSync(join(folder, "main-"))));
  before = fileState(dbPath);
  server = await serveSessionBrowser({ db: dbPath, port: 0, liveIntervalMs: 200 });
  browser = await launchBrowser();
  context = await browser.newContext({ viewport: { width: 1280, height: 900 }, acceptDownloads: true });
  // Visit the printed URL once: the token becomes a cookie for the rest.
  const page = await context.newPage();
  await page.goto(server.url);
  await page.close();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
  rmSync(folder, { recursive: true, force: true });
});

/** The pages' errors, but the browser's note of the 404 that `/session/nope` is expected to get. */
function unexpectedErrors(): string[] {
  return pageErrors.filter((e) => !(e.startsWith("/session/nope: ") && /status of 404/.test(e)));
}

async function open(path: string): Promise<Page> {
  const page = await context.newPage();
  page.on("pageerror", (e) => pageErrors.push(`${path}: ${e.message}`));
  page.on("console", (m) => {
    if (m.type() === "error") pageErrors.push(`${path}: ${m.text()}`);
  });
  await page.goto(`${server.origin}${path}`);
  return page;
}

describe("session browser in Chromium", () => {
  it("drops the token from the address and keeps the session in a cookie", async () => {
    const page = await context.newPage();
    await page.goto(server.url);
    expect(page.url()).toBe(`${server.origin}/`);
    const cookies = await context.cookies(server.origin);
    expect(cookies.find((c) => c.name === `hermes_token_${server.port}`)?.httpOnly).toBe(true);
    await page.close();
  });

  it("pages through every session as the list scrolls, with chains folded under their root", async () => {
    const page = await open("/");
    await page.locator(".session-item").first().waitFor();
    expect(await page.locator(".session-item").count()).toBe(50);
    await screenshot(page, "sessions");
    // Scrolling to the end loads the next pages (cursor paging), until everything is shown.
    // (Scrolls until the end shows, for up to 20 s: page loads are slow on a loaded machine.)
    for (const deadline = Date.now() + 20_000; Date.now() < deadline; ) {
      if (await page.locator(".end-of-list").isVisible()) break;
      await page.locator(".sentinel").scrollIntoViewIfNeeded();
      await page.waitForTimeout(150);
    }
    await expect.poll(() => page.locator(".session-item").count(), POLL).toBe(seed.listed);
    expect(await page.locator(".end-of-list").textContent()).toContain(`All ${seed.listed} sessions`);
    const docker = page.locator(".session-item", { hasText: "Fix Docker build" }).first();
    expect(await docker.locator(".badge").textContent()).toBe("live");
    expect(await page.locator(".session-item a.row-link", { hasText: "Fix Docker build #2" }).count()).toBe(
      0,
    );
    await docker.getByRole("button", { name: /1 more in this chain/ }).click();
    await docker.locator(".chain-list a", { hasText: "Fix Docker build #2" }).waitFor();
    expect(await docker.locator(".chain-list").textContent()).toContain("compressed into");
    await page.close();
  });

  it("filters sessions by source", async () => {
    const page = await open("/");
    await page.locator(".session-item").first().waitFor();
    await page.getByLabel("Source").selectOption("telegram");
    await expect.poll(() => page.locator(".session-item").count(), POLL).toBe(1);
    expect(await page.locator(".session-item .row-link").textContent()).toBe("桂林旅行计划");
    expect(page.url()).toContain("source=telegram");
    await page.close();
  });

  it("moves through the list with the arrow keys", async () => {
    const page = await open("/");
    const links = page.locator(".session-list a.row-link");
    await links.first().waitFor();
    await links.first().focus();
    await page.keyboard.press("ArrowDown");
    await page.keyboard.press("ArrowDown");
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe(
      await links.nth(2).textContent(),
    );
    await page.keyboard.press("ArrowUp");
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe(
      await links.nth(1).textContent(),
    );
    await page.keyboard.press("Enter");
    await page.waitForURL(/\/session\//);
    await page.close();
  });

  it("searches docker and 桂林, and opens a hit scrolled to it", async () => {
    const page = await open("/search");
    await page.getByLabel("Search messages").fill("docker");
    await page.keyboard.press("Enter");
    await page.locator(".hit-item").first().waitFor();
    expect(await page.locator(".hit-item mark").first().textContent()).toMatch(/^docker$/i);
    await screenshot(page, "search-docker");
    await page.getByLabel("Search messages").fill("桂林");
    await page.keyboard.press("Enter");
    await page.locator(".hit-item", { hasText: "桂林旅行计划" }).first().waitFor();
    expect(await page.locator(".hit-item mark").first().textContent()).toBe("桂林");
    await screenshot(page, "search-cjk");
    // A hit deep in a long conversation opens that page of it, the hit in view and focused.
    await page.getByLabel("Search messages").fill("zanzibar");
    await page.keyboard.press("Enter");
    await page.locator(".hit-item a.row-link").first().click();
    await page.waitForURL(/\/session\/long_session\?message=\d+/);
    const hit = page.locator(".message.hit");
    await hit.waitFor();
    expect(await hit.textContent()).toContain("Long message 321 with the word zanzibar");
    expect(await hit.evaluate((el) => el === document.activeElement)).toBe(true);
    const box = await hit.boundingBox();
    expect(box !== null && box.y >= 0 && box.y < 900).toBe(true);
    // Paged: never the whole 450-message conversation in the DOM.
    expect(await page.locator(".message").count()).toBeLessThanOrEqual(100);
    expect(await page.locator(".pager").first().textContent()).toContain("of 450");
    await screenshot(page, "conversation-long-at-hit");
    await page.close();
  });

  it("moves through search results with the arrow keys and opens one with Enter", async () => {
    const page = await open("/search?q=docker");
    const links = page.locator(".hits a.row-link");
    await links.first().waitFor();
    expect(await links.count()).toBeGreaterThanOrEqual(2);
    await links.first().focus();
    await page.keyboard.press("ArrowDown");
    expect(await page.evaluate(() => document.activeElement?.getAttribute("href"))).toBe(
      await links.nth(1).getAttribute("href"),
    );
    await page.keyboard.press("ArrowUp");
    const first = await links.first().getAttribute("href");
    expect(await page.evaluate(() => document.activeElement?.getAttribute("href"))).toBe(first);
    await page.keyboard.press("Enter");
    await page.waitForURL((url) => `${url.pathname}${url.search}` === first);
    await page.locator(".message.hit").waitFor();
    await page.close();
  });

  it("answers hostile queries with results or an empty list, never an error page", async () => {
    const page = await open("/search");
    for (const q of ['"unbalanced', "a AND OR b", "NEAR(", "<script>alert(1)</script>", "((((", "*"]) {
      await page.getByLabel("Search messages").fill(q);
      await page.keyboard.press("Enter");
      await page.waitForLoadState("networkidle");
      expect(await page.locator("h1").textContent()).toBe("Search");
      expect(await page.locator(".error").count(), q).toBe(0);
    }
    await page.close();
  });

  it("renders Markdown and code, folds tool calls, and follows a lineage link", async () => {
    const page = await open(`/session/${seed.dockerRoot}`);
    await page.locator(".message").first().waitFor();
    expect(await page.locator(".markdown code").first().textContent()).toBe("COPY failed: no such file");
    const block = page.locator(".markdown pre.code code.hljs").first();
    expect(await block.textContent()).toContain("npm run build && docker build -t app:latest .");
    expect(await block.locator(".hljs-comment").textContent()).toBe("# build first, then the image");
    expect(await block.locator("span[class^='hljs-']").count()).toBeGreaterThan(0);
    expect(await page.locator(".markdown table").count()).toBe(1);
    const call = page.locator("details.tool-call").first();
    expect(await call.evaluate((d: HTMLDetailsElement) => d.open)).toBe(false);
    expect(await call.locator("pre").isVisible()).toBe(false);
    await call.locator("summary").click();
    expect(await call.evaluate((d: HTMLDetailsElement) => d.open)).toBe(true);
    expect(await call.locator("pre").textContent()).toContain('"command": "cat Dockerfile"');
    expect(
      await page
        .locator("details.reasoning")
        .first()
        .evaluate((d: HTMLDetailsElement) => d.open),
    ).toBe(false);
    expect(await page.locator(".figures").textContent()).toContain("5,000");
    await screenshot(page, "conversation");
    await page.locator(".lineage a", { hasText: "Fix Docker build #2" }).click();
    await page.waitForURL(`${server.origin}/session/${seed.dockerTip}`);
    await expect.poll(() => page.locator("h1").textContent(), POLL).toBe("Fix Docker build #2");
    expect(await page.locator(".lineage .current").textContent()).toContain("Fix Docker build #2");
    await page.close();
  });

  it("never runs or keeps hostile stored content", async () => {
    const page = await open(`/session/${seed.hostile}`);
    await page.locator(".message").first().waitFor();
    for (const d of await page.locator("details").all()) await d.locator("summary").click();
    const report = await page.evaluate(() => {
      const all = [...document.querySelectorAll("main *")];
      return {
        pwned: (window as unknown as { __pwned?: unknown }).__pwned ?? null,
        scripts: document.querySelectorAll(
          "main script, main iframe, main svg, main img, main object, main embed",
        ).length,
        handlers: all.flatMap((el) =>
          [...el.attributes].filter((a) => a.name.startsWith("on")).map((a) => a.name),
        ),
        badLinks: [...document.querySelectorAll("a")]
          .map((a) => a.getAttribute("href") ?? "")
          .filter((h) => /^\s*(javascript|data|vbscript):/i.test(h)),
        styles: all.filter((el) => el.hasAttribute("style")).length,
        rawHtml: document.getElementById("raw-html") !== null,
      };
    });
    expect(report).toEqual({
      pwned: null,
      scripts: 0,
      handlers: [],
      badLinks: [],
      styles: 0,
      rawHtml: false,
    });
    // The hostile text is shown as text.
    expect(await page.locator("main").textContent()).toContain("<script>window.__pwned = 'script'</script>");
    expect(await page.locator("h1").textContent()).toBe("<script>window.__pwned='title'</script> hostile");
    for (const link of await page.locator(".markdown a").all()) {
      expect(await link.getAttribute("rel")).toContain("noopener");
    }
    await screenshot(page, "conversation-hostile");
    await page.close();
  });

  it("exports a session as JSONL and Markdown", async () => {
    const page = await open(`/session/${seed.telegram}`);
    await page.locator(".message").first().waitFor();
    const [jsonl] = await Promise.all([
      page.waitForEvent("download"),
      page.getByText("Export JSONL").click(),
    ]);
    expect(jsonl.suggestedFilename()).toBe(`${seed.telegram}.jsonl`);
    const lines = readFileSync((await jsonl.path())!, "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(lines[1].id).toBe(seed.telegram);
    expect(lines[1].messages.map((m: { content: string }) => m.content)).toContain(
      "我想去桂林旅游，有什么推荐？",
    );
    const [md] = await Promise.all([
      page.waitForEvent("download"),
      page.getByText("Export Markdown").click(),
    ]);
    expect(md.suggestedFilename()).toBe(`${seed.telegram}.md`);
    expect(readFileSync((await md.path())!, "utf8")).toContain("桂林山水甲天下");
    await page.close();
  });

  it("shows usage as a chart with its table", async () => {
    const page = await open("/usage?group=model");
    await page.locator("canvas").waitFor();
    await page.locator("tbody tr").first().waitFor();
    expect(await page.locator("tbody th").allTextContents()).toEqual(
      expect.arrayContaining(["gpt-5", "claude-sonnet-4", "qwen3"]),
    );
    const painted = await page.locator("canvas").evaluate((c: HTMLCanvasElement) => {
      const data = c.getContext("2d")!.getImageData(0, 0, c.width, c.height).data;
      let n = 0;
      for (let i = 3; i < data.length; i += 4) if (data[i]! > 0) n++;
      return n;
    });
    expect(painted).toBeGreaterThan(1000);
    await screenshot(page, "usage");
    await page.close();
  });

  it("labels every control, and reads at 200% zoom and in the dark theme", async () => {
    for (const path of ["/", "/search?q=docker", `/session/${seed.dockerRoot}`, "/usage", "/live"]) {
      const page = await open(path);
      await page.waitForLoadState("networkidle");
      const unlabelled = await page.evaluate(() =>
        [...document.querySelectorAll("input, select, textarea, button")]
          .filter((el) => {
            const named =
              el.getAttribute("aria-label") ||
              (el as HTMLInputElement).labels?.length ||
              el.textContent?.trim();
            return !named;
          })
          .map((el) => el.outerHTML),
      );
      expect(unlabelled, path).toEqual([]);
      await page.close();
    }
    // 200% zoom of a 1280-pixel window: a 640-CSS-pixel viewport at twice the density.
    const zoomed = await browser.newContext({ viewport: { width: 640, height: 900 }, deviceScaleFactor: 2 });
    await zoomed.addCookies(await context.cookies(server.origin));
    for (const [path, content, name] of [
      ["/", ".session-item", "sessions-zoom-200"],
      [`/session/${seed.dockerRoot}`, ".message", "conversation-zoom-200"],
      ["/usage", "tbody tr", "usage-zoom-200"],
    ] as const) {
      const page = await zoomed.newPage();
      await page.goto(`${server.origin}${path}`);
      await page.locator(content).first().waitFor();
      await page.waitForLoadState("networkidle");
      // Charts size themselves after the first layout: the page settles within a few frames.
      await expect
        .poll(
          () =>
            page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth),
          {
            message: path,
            timeout: 15_000,
          },
        )
        .toBeLessThanOrEqual(0);
      await screenshot(page, name);
      await page.close();
    }
    await zoomed.close();
    const dark = await browser.newContext({ viewport: { width: 1280, height: 900 }, colorScheme: "dark" });
    await dark.addCookies(await context.cookies(server.origin));
    const page = await dark.newPage();
    await page.goto(`${server.origin}/session/${seed.dockerRoot}`);
    await page.locator(".message").first().waitFor();
    const [bg, fg] = await page.evaluate(() => {
      const s = getComputedStyle(document.body);
      return [s.backgroundColor, s.color];
    });
    expect(bg).toBe("rgb(20, 23, 28)");
    expect(fg).toBe("rgb(230, 232, 235)");
    await screenshot(page, "conversation-dark");
    await dark.close();
  });

  it("opens a followed conversation at its end", async () => {
    const page = await open(`/session/${seed.long}?follow=1`);
    await page.locator(".message").first().waitFor();
    await expect
      .poll(() => page.locator(".message").last().textContent(), POLL)
      .toContain("Long message 449");
    expect(await page.getByLabel("Follow").isChecked()).toBe(true);
    expect(await page.locator(".pager").first().textContent()).toContain("351–450 of 450");
    await page.close();
  });

  it("left the database's bytes, mode and folder unchanged (no -wal/-shm, no sidecar folder)", () => {
    expect(fileState(dbPath)).toEqual(before);
    expect(pageErrors).toEqual([]);
  });
});

describe("names, missing sessions, tool-call hits and money in Chromium (issue 43)", () => {
  it("says a session is not found, with the ways back and the document title to match", async () => {
    const page = await open("/session/nope");
    await expect.poll(() => page.locator("h1").textContent(), POLL).toBe("Session not found");
    expect(await page.title()).toBe("Session not found · Hermes sessions");
    expect(await page.locator("main").textContent()).toContain("No session has the id nope");
    // Nothing of a conversation: no pager, no "No messages", no figures.
    expect(await page.locator(".pager").count()).toBe(0);
    expect(await page.locator("main").textContent()).not.toContain("No messages");
    await screenshot(page, "session-not-found");
    await page.getByRole("link", { name: "All sessions" }).click();
    await page.waitForURL(`${server.origin}/`);
    await page.locator(".session-item").first().waitFor();
    expect(await page.title()).toBe("Sessions · Hermes sessions");
    await page.close();
  });

  it("names an untitled session by its first message in the list, search and its page, its id once", async () => {
    const page = await open("/search?q=%22Plain%20question%20number%207%22&role=user");
    await page.locator(".hit-item").first().waitFor();
    expect(await page.locator(".hit-item a.row-link").first().textContent()).toBe("Plain question number 7");
    await screenshot(page, "search-untitled-name");
    await page.goto(`${server.origin}/session/plain_007`);
    await expect.poll(() => page.locator("h1").textContent(), POLL).toBe("Plain question number 7");
    expect(await page.title()).toBe("Plain question number 7 · Hermes sessions");
    const head = (await page.locator(".session-head").textContent()) ?? "";
    expect(head.split("plain_007").length - 1).toBe(1);
    await screenshot(page, "conversation-untitled-name");
    // The list names it the same, and a compression chain after its first session.
    await page.goto(`${server.origin}/?title=plain_007`);
    await expect
      .poll(() => page.locator(".session-item a.row-link").allTextContents(), POLL)
      .toEqual(["Plain question number 7"]);
    await page.goto(`${server.origin}/?title=Fix%20Docker`);
    await expect
      .poll(() => page.locator(".session-item a.row-link").allTextContents(), POLL)
      .toEqual(["Fix Docker build"]);
    await page.close();
  });

  it("shows a hit inside a tool call as the call, the match marked", async () => {
    const page = await open("/search?q=cat&role=assistant");
    const hit = page.locator(".hit-item", { hasText: "Fix Docker build" }).first();
    await hit.waitFor();
    const snippet = hit.locator(".snippet");
    expect(await snippet.textContent()).toBe('terminal({"command":"cat Dockerfile"})');
    expect(await snippet.locator("mark").allTextContents()).toEqual(["cat"]);
    expect(await snippet.evaluate((el) => getComputedStyle(el).fontFamily)).toContain("monospace");
    await screenshot(page, "search-tool-call");
    await page.close();
  });

  it("draws one day's cost as a point, and writes every amount of money one way", async () => {
    // A UTC day inside the 120 hourly plain sessions (seeded 20 days ago): one row, one point.
    const day = new Date(Date.now() - 20 * 86_400_000 + 60 * 3_600_000).toISOString().slice(0, 10);
    const page = await open(`/usage?group=day&from=${day}&to=${day}`);
    await expect.poll(() => page.locator("tbody th").allTextContents(), POLL).toEqual([day]);
    await page.waitForLoadState("networkidle");
    const costPixels = await page.locator("canvas").evaluate((c: HTMLCanvasElement) => {
      const probe = document.createElement("canvas").getContext("2d")!;
      probe.fillStyle = getComputedStyle(document.documentElement).getPropertyValue("--chart-4").trim();
      const hex = probe.fillStyle.slice(1);
      const [r, g, b] = [0, 2, 4].map((i) => Number.parseInt(hex.slice(i, i + 2), 16));
      const { data, width, height } = c.getContext("2d")!.getImageData(0, 0, c.width, c.height);
      let n = 0;
      // The plot area only (the legend's sample of the colour is at the top).
      for (let y = Math.floor(height * 0.2); y < height; y++) {
        for (let x = 0; x < width; x++) {
          const i = (y * width + x) * 4;
          const near = Math.abs(data[i]! - r!) + Math.abs(data[i + 1]! - g!) + Math.abs(data[i + 2]! - b!);
          if (data[i + 3]! > 200 && near < 30) n++;
        }
      }
      return n;
    });
    expect(costPixels).toBeGreaterThan(20);
    await screenshot(page, "usage-one-day");
    await page.goto(`${server.origin}/usage?group=model`);
    await page.locator("tbody tr").first().waitFor();
    const money = await page.locator("tbody td:nth-child(10), tbody td:nth-child(11)").allTextContents();
    expect(money.length).toBeGreaterThan(2);
    for (const cell of money) expect(cell).toMatch(/^(\$\d{1,3}(,\d{3})*\.\d{4}|—)$/);
    expect(await page.locator("main p.dim").first().textContent()).toMatch(/\$\d{1,3}(,\d{3})*\.\d{4}$/);
    await page.close();
  });

  it("raised no error in any page (but the browser's note of the expected 404)", () => {
    expect(unexpectedErrors()).toEqual([]);
  });
});

let liveDb = "";

describe("live view in Chromium", () => {
  let liveServer: RunningSessionBrowser;
  beforeAll(async () => {
    ({ path: liveDb } = await seededCopy(mkdtempSync(join(folder, "live-"))));
    liveServer = await serveSessionBrowser({ db: liveDb, port: 0, liveIntervalMs: 200 });
  });
  afterAll(async () => {
    await liveServer?.close();
  });

  it("new messages and sessions from another process appear without a reload", async () => {
    const live = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await live.newPage();
    await page.goto(liveServer.url);
    await page.goto(`${liveServer.origin}/session/${seed.dockerTip}?follow=1`);
    await page.locator(".message").first().waitFor();
    const loads: string[] = [];
    page.on("framenavigated", (f) => loads.push(f.url()));
    await appendElsewhere(liveDb, {
      sessionId: seed.dockerTip,
      content: "Appended by the agent in another process",
    });
    await page
      .locator(".message", { hasText: "Appended by the agent in another process" })
      .waitFor({ timeout: 20_000 });
    // Followed: the new message is in view at the bottom.
    const box = await page.locator(".message").last().boundingBox();
    expect(box !== null && box.y + box.height <= 900 + 1).toBe(true);
    await screenshot(page, "conversation-live");
    await page.goto(`${liveServer.origin}/live`);
    await page.locator(".session-item").first().waitFor();
    loads.length = 0;
    await appendElsewhere(liveDb, {
      sessionId: "brand_new_session",
      content: "hello from a new session",
      createSession: { source: "telegram", title: "Created while watching" },
    });
    await page.locator(".session-item", { hasText: "Created while watching" }).waitFor({ timeout: 20_000 });
    expect(await page.locator(".session-item .row-link").first().textContent()).toBe(
      "Created while watching",
    );
    expect(loads).toEqual([]);
    await screenshot(page, "live");
    await live.close();
  });
});

/** The v30 sample upgraded to schema v31 (stable message ids; see shared/fixtures/UPSTREAM.md). */
const V31_SAMPLE_DB = join(SAMPLE_DB, "../hermes-v31-sample.db");

describe("a newer agent's file (schema v31) in Chromium: what the agent shows", () => {
  let v31Server: RunningSessionBrowser;
  let v31Path: string;
  let v31Before: ReturnType<typeof fileState>;
  let v31: BrowserContext;
  const DC = "20260103_080000_dc0001";
  beforeAll(async () => {
    v31Path = join(mkdtempSync(join(folder, "v31-")), "state.db");
    copyFileSync(V31_SAMPLE_DB, v31Path);
    chmodSync(v31Path, 0o600);
    v31Before = fileState(v31Path);
    v31Server = await serveSessionBrowser({ db: v31Path, port: 0 });
    v31 = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await v31.newPage();
    await page.goto(v31Server.url);
    await page.close();
  });
  afterAll(async () => {
    await v31?.close();
    await v31Server?.close();
  });
  const openV31 = async (path: string): Promise<Page> => {
    const page = await v31.newPage();
    page.on("pageerror", (e) => pageErrors.push(`v31 ${path}: ${e.message}`));
    await page.goto(`${v31Server.origin}${path}`);
    return page;
  };

  it("offers only sources it can list, and marks pinned sessions", async () => {
    const page = await openV31("/");
    await page.locator(".session-item").first().waitFor();
    const sources = await page
      .getByLabel("Source")
      .locator("option")
      .evaluateAll((options) => options.map((o) => (o as HTMLOptionElement).value).filter((v) => v !== ""));
    // cron (auto-archived), homeassistant (archived) and matrix (hidden) are not listed: not offered.
    expect(sources.sort()).toEqual(["acp", "cli", "discord", "signal", "subagent", "telegram"]);
    for (const source of ["discord", "subagent"]) {
      await page.getByLabel("Source").selectOption(source);
      await expect.poll(() => page.locator(".session-item").count(), POLL).toBe(1);
    }
    await page.getByLabel("Source").selectOption("cli");
    const docker = page.locator(".session-item", { hasText: "Fix Docker Build" }).first();
    await docker.waitFor();
    expect(await docker.locator(".badge.mark").allTextContents()).toEqual(["pinned"]);
    await screenshot(page, "v31-sessions-pinned");
    await page.close();
  });

  it("shows both message counts and marks the compaction point of dc0001", async () => {
    const page = await openV31(`/session/${DC}`);
    await page.locator("#m103").waitFor();
    const figure = page.locator(".figures div", { hasText: "Messages" }).locator("dd");
    await expect.poll(() => figure.textContent(), POLL).toBe("3 in the agent's context, 91 shown");
    expect(await page.locator(".compaction-point").count()).toBe(1);
    // The point sits between the last summarized row (98) and the summary (101).
    const around = await page
      .locator(".compaction-point")
      .evaluate((el) => [el.previousElementSibling?.id, el.nextElementSibling?.id]);
    expect(around).toEqual(["m98", "m101"]);
    expect(await page.locator("#m101 .badge.view-state").textContent()).toBe("compaction summary");
    expect(await page.locator("#m11 .badge.view-state").textContent()).toBe("summarized");
    expect(await page.locator("#m102 .badge.view-state").count()).toBe(0);
    await page.locator(".compaction-point").scrollIntoViewIfNeeded();
    await screenshot(page, "v31-compaction-point");
    await page.close();
  });

  it("marks auto-archived and pinned sessions on their page", async () => {
    const cron = await openV31("/session/20260106_000000_cron");
    await cron.locator(".session-head .badge.mark").first().waitFor();
    expect(await cron.locator(".session-head .badge.mark").allTextContents()).toEqual(["auto-archived"]);
    await cron.close();
    const pinned = await openV31("/session/20260101_090000_cli001");
    await pinned.locator(".session-head .badge.mark").first().waitFor();
    expect(await pinned.locator(".session-head .badge.mark").allTextContents()).toEqual(["pinned"]);
    await pinned.close();
  });

  it("links a message by its uid: /session/<id>#m-<uid> opens the current version, scrolled to it", async () => {
    // Rows 100 (superseded) and 103 (its active copy) share this uid: the link opens 103.
    const page = await openV31(`/session/${DC}#m-a787d7f5b2534171bc07984b5aaf4089`);
    await page.locator(".message.hit").waitFor();
    expect(await page.locator(".message.hit").getAttribute("id")).toBe("m103");
    // A summarized row early in the conversation: scrolled into view and focused.
    await page.goto(`${v31Server.origin}/session/${DC}#m-${await uidOf(DC, 11)}`);
    await expect.poll(() => page.locator(".message.hit").getAttribute("id"), POLL).toBe("m11");
    expect(await page.evaluate(() => document.activeElement?.id)).toBe("m11");
    // Each message's own link carries its uid.
    expect(await page.locator("#m101 a.permalink").getAttribute("href")).toBe(
      `/session/${DC}#m-3e591f29c7834237aa44810e56917b59`,
    );
    await page.close();
  });

  it("a search hit links by uid: the row an older build appended (118) opens at itself", async () => {
    const page = await openV31("/search");
    await page.getByLabel("Search messages").fill("nightly");
    await page.keyboard.press("Enter");
    const hit = page.locator(".hit-item a.row-link[href$='#m-a5d1c1238c6e9f385b5e8f4c7ee4216d']");
    await hit.waitFor();
    await hit.click();
    await page.waitForURL(/\/session\/20260105_090000_cli005#m-a5d1c1238c6e9f385b5e8f4c7ee4216d$/);
    await expect.poll(() => page.locator(".message.hit").getAttribute("id"), POLL).toBe("m118");
    await screenshot(page, "v31-uid-link");
    await page.close();
  });

  it("left the v31 file's bytes, mode and folder unchanged", () => {
    expect(fileState(v31Path)).toEqual(v31Before);
    expect(unexpectedErrors()).toEqual([]);
  });

  /** The `message_uid` of row `id`, as the API answers it. */
  async function uidOf(session: string, id: number): Promise<string> {
    const page = await v31.newPage();
    const res = await page.request.get(
      `${v31Server.origin}/api/sessions/${session}/messages?around=${id}&limit=1`,
    );
    const body = (await res.json()) as { messages: Array<{ id: number; message_uid: string }> };
    await page.close();
    const uid = body.messages.find((m) => m.id === id)?.message_uid;
    expect(uid).toMatch(/^[0-9a-f]{32}$/);
    return uid as string;
  }
});
