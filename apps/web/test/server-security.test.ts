import { request } from "node:http";
import { join } from "node:path";
import { openSessionStore } from "@hermes/store";
import { afterEach, describe, expect, it } from "vitest";
import {
  CSRF_HEADER,
  type ErrorAnswer,
  type MessagesAnswer,
  type RunningSessionBrowser,
  type SearchAnswer,
  type SessionAnswer,
  type SessionsAnswer,
  serveSessionBrowser,
  WebServerError,
} from "../dist/index.js";
import { allowedHosts } from "../dist/security/host-guard.js";
import { readAnswer } from "./helpers/read-answer.js";
import { seededCopy } from "./helpers/seed-web-database.js";
import { tempDir } from "./helpers/temp.js";

const running: RunningSessionBrowser[] = [];
afterEach(async () => {
  for (const r of running.splice(0)) await r.close();
});

async function start(o: Parameters<typeof serveSessionBrowser>[0] = {}) {
  const { path, seed } = await seededCopy();
  const browser = await serveSessionBrowser({ db: path, port: 0, ...o });
  running.push(browser);
  return { browser, path, seed };
}

/** A request with the access token as a bearer (scripts) unless `headers` says otherwise. */
const get = (b: RunningSessionBrowser, path: string, headers: Record<string, string> = {}) =>
  fetch(`${b.origin}${path}`, {
    headers: { authorization: `Bearer ${b.token}`, ...headers },
    redirect: "manual",
  });

/** A GET with a Host header of our choosing (fetch does not let a caller set it). */
function withHost(b: RunningSessionBrowser, path: string, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: "127.0.0.1", port: b.port, path, headers: { host, authorization: `Bearer ${b.token}` } },
      (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      },
    );
    req.on("error", reject);
    req.end();
  });
}

const csrfOf = async (b: RunningSessionBrowser) => {
  const html = await (await get(b, "/")).text();
  return /name="hermes-csrf" content="([^"]+)"/.exec(html)?.[1] ?? "";
};

describe("access token", () => {
  it("refuses requests without the token, on pages, assets and the API", async () => {
    const { browser } = await start();
    for (const path of ["/", "/search", "/api/sessions", "/api/live", "/assets/anything.js"]) {
      const res = await fetch(`${browser.origin}${path}`, { redirect: "manual" });
      expect(res.status, path).toBe(401);
      expect(await res.text()).not.toContain("hermes-csrf");
    }
    expect(
      (await get(browser, "/api/sessions", { authorization: "Bearer wrong-token-wrong-token" })).status,
    ).toBe(401);
    expect((await fetch(`${browser.origin}/?token=wrong`, { redirect: "manual" })).status).toBe(401);
  });

  it("trades the token in the printed URL for a cookie and a redirect without it", async () => {
    const { browser } = await start();
    expect(browser.url).toBe(`${browser.origin}/?token=${browser.token}`);
    const first = await fetch(`${browser.url}&x=1`, { redirect: "manual" });
    expect(first.status).toBe(303);
    expect(first.headers.get("location")).toBe("/?x=1");
    const cookie = first.headers.get("set-cookie") ?? "";
    expect(cookie).toMatch(new RegExp(`^hermes_token_${browser.port}=${browser.token};`));
    expect(cookie).toMatch(/HttpOnly/i);
    expect(cookie).toMatch(/SameSite=Strict/i);
    const page = await fetch(`${browser.origin}/`, { headers: { cookie: cookie.split(";")[0]! } });
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('<div id="app">');
  });

  it("generates a different random token at each start", async () => {
    const a = await start();
    const b = await start();
    expect(a.browser.token).not.toBe(b.browser.token);
    expect(a.browser.token.length).toBeGreaterThanOrEqual(32);
  });

  it("refuses a non-loopback address without --token, and a short token", async () => {
    const { path } = await seededCopy();
    for (const host of ["0.0.0.0", "192.168.1.20", "::"]) {
      const error = await serveSessionBrowser({ db: path, host, port: 0 }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(WebServerError);
      expect((error as WebServerError).code).toBe("TOKEN_REQUIRED");
    }
    const weak = await serveSessionBrowser({ db: path, port: 0, token: "short" }).catch((e: unknown) => e);
    expect((weak as WebServerError).code).toBe("WEAK_TOKEN");
    const missing = await serveSessionBrowser({ db: join(tempDir(), "none.db"), port: 0 }).catch(
      (e: unknown) => e,
    );
    expect((missing as WebServerError).code).toBe("NO_DATABASE");
  });

  it("listens on a wildcard address with an explicit token", async () => {
    const { browser } = await start({ host: "0.0.0.0", token: "a-long-enough-token-for-tests" });
    const res = await fetch(`http://127.0.0.1:${browser.port}/api/sessions?limit=1`, {
      headers: { authorization: "Bearer a-long-enough-token-for-tests" },
    });
    expect(res.status).toBe(200);
  });
});

describe("Host header", () => {
  it("answers only to its own names (DNS rebinding)", async () => {
    const { browser } = await start();
    const hosts = allowedHosts("127.0.0.1", browser.port);
    expect([...hosts].sort()).toEqual([
      `127.0.0.1:${browser.port}`,
      `[::1]:${browser.port}`,
      `localhost:${browser.port}`,
    ]);
    for (const host of [
      "evil.example",
      `evil.example:${browser.port}`,
      "127.0.0.1",
      `127.0.0.1:${browser.port + 1}`,
    ]) {
      expect(await withHost(browser, "/api/sessions", host), host).toBe(421);
    }
    expect(await withHost(browser, "/api/sessions?limit=1", `localhost:${browser.port}`)).toBe(200);
    expect(await withHost(browser, "/api/sessions?limit=1", `[::1]:${browser.port}`)).toBe(200);
  });
});

describe("headers", () => {
  it("sends a strict Content-Security-Policy and no-store on the API", async () => {
    const { browser } = await start();
    const page = await get(browser, "/");
    const csp = page.headers.get("content-security-policy") ?? "";
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toContain("unsafe-inline");
    expect(csp).not.toContain("unsafe-eval");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).toContain("require-trusted-types-for 'script'");
    expect(page.headers.get("x-content-type-options")).toBe("nosniff");
    expect(page.headers.get("referrer-policy")).toBe("no-referrer");
    expect((await page.text()).match(/<script[^>]*>/g)).toEqual([
      expect.stringMatching(/^<script type="module" src="\/assets\/main-[A-Z0-9]+\.js">$/),
    ]);
    expect((await get(browser, "/api/sessions")).headers.get("cache-control")).toBe("no-store");
  });

  it("serves assets compressed, with long caching", async () => {
    const { browser } = await start();
    const html = await (await get(browser, "/")).text();
    const js = /src="(\/assets\/[^"]+\.js)"/.exec(html)?.[1] ?? "";
    const res = await get(browser, js, { "accept-encoding": "br, gzip" });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-encoding")).toBe("br");
    expect(res.headers.get("cache-control")).toContain("immutable");
    for (const path of [
      "/assets/%2e%2e/package.json",
      "/assets/..%2fpackage.json",
      "/assets/%2e%2e%2f%2e%2e%2fpackage.json",
    ]) {
      const res = await get(browser, path);
      expect(await res.text(), path).not.toContain('"name": "@hermes/web"');
    }
  });
});

describe("writes", () => {
  it("are refused by a read-only server, and the database is not changed", async () => {
    const { browser, seed } = await start();
    const csrf = await csrfOf(browser);
    const put = await fetch(`${browser.origin}/api/sessions/${seed.long}/title`, {
      method: "PUT",
      headers: {
        authorization: `Bearer ${browser.token}`,
        [CSRF_HEADER]: csrf,
        "content-type": "application/json",
        origin: browser.origin,
      },
      body: JSON.stringify({ title: "changed" }),
    });
    expect(put.status).toBe(403);
    expect((await readAnswer<ErrorAnswer>(put)).error).toBe("READ_ONLY");
    const session = await readAnswer<SessionAnswer>(await get(browser, `/api/sessions/${seed.long}`));
    expect(session.session.title).toBe("A very long session");
  });

  it("need the page's CSRF token and a same-origin request with --allow-writes", async () => {
    const { browser, seed, path } = await start({ allowWrites: true });
    const csrf = await csrfOf(browser);
    expect(csrf.length).toBeGreaterThanOrEqual(32);
    const rename = (headers: Record<string, string>) =>
      fetch(`${browser.origin}/api/sessions/${seed.long}/title`, {
        method: "PUT",
        headers: { authorization: `Bearer ${browser.token}`, "content-type": "application/json", ...headers },
        body: JSON.stringify({ title: "Renamed from the browser" }),
      });
    expect((await rename({ origin: browser.origin })).status).toBe(403);
    expect((await rename({ origin: browser.origin, [CSRF_HEADER]: "not-the-token" })).status).toBe(403);
    expect((await rename({ origin: "http://evil.example", [CSRF_HEADER]: csrf })).status).toBe(403);
    expect((await rename({ "sec-fetch-site": "cross-site", [CSRF_HEADER]: csrf })).status).toBe(403);
    expect(
      (await rename({ origin: browser.origin, "sec-fetch-site": "same-site", [CSRF_HEADER]: csrf })).status,
    ).toBe(403);
    expect((await rename({ [CSRF_HEADER]: csrf })).status).toBe(403);
    const store = await openSessionStore({ path });
    expect(await store.getSessionTitle(seed.long)).toBe("A very long session");
    await store.close();
    const ok = await rename({ origin: browser.origin, [CSRF_HEADER]: csrf });
    expect(ok.status).toBe(200);
    expect(await ok.json()).toEqual({ id: seed.long, title: "Renamed from the browser" });
    const del = await fetch(`${browser.origin}/api/sessions/${seed.telegram}`, {
      method: "DELETE",
      headers: { authorization: `Bearer ${browser.token}`, origin: browser.origin, [CSRF_HEADER]: csrf },
    });
    expect(await del.json()).toEqual({ id: seed.telegram, deleted: true });
    const prune = await fetch(`${browser.origin}/api/prune`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${browser.token}`,
        origin: browser.origin,
        [CSRF_HEADER]: csrf,
        "content-type": "application/json",
      },
      body: JSON.stringify({ olderThanDays: 365 }),
    });
    expect(await prune.json()).toEqual({ removed: 1 });
    const check = await openSessionStore({ path });
    expect(await check.getSessionTitle(seed.long)).toBe("Renamed from the browser");
    expect(await check.getSession(seed.telegram)).toBeNull();
    expect(await check.getSession(seed.oldCron)).toBeNull();
    await check.close();
  });
});

describe("API", () => {
  it("pages through every listed session, and filters", async () => {
    const { browser, seed } = await start();
    const ids: string[] = [];
    let cursor: string | null = null;
    do {
      const page: SessionsAnswer = await readAnswer<SessionsAnswer>(
        await get(browser, `/api/sessions?limit=50${cursor ? `&cursor=${cursor}` : ""}`),
      );
      ids.push(...page.sessions.map((s) => s.id));
      cursor = page.nextCursor;
    } while (cursor !== null);
    expect(ids).toHaveLength(seed.listed);
    expect(new Set(ids).size).toBe(seed.listed);
    expect(ids[0]).toBe(seed.dockerRoot);
    expect(ids).not.toContain(seed.dockerTip);
    const telegram = await readAnswer<SessionsAnswer>(await get(browser, "/api/sessions?source=telegram"));
    expect(telegram.sessions.map((s) => s.id)).toEqual([seed.telegram]);
    const bad = await get(browser, "/api/sessions?cursor=garbage");
    expect(bad.status).toBe(400);
    expect((await readAnswer<ErrorAnswer>(bad)).error).toBe("INVALID_ARGUMENT");
  });

  it("searches English and CJK, and hostile queries answer without an error", async () => {
    const { browser, seed } = await start();
    const search = async (q: string) =>
      readAnswer<SearchAnswer>(await get(browser, `/api/search?q=${encodeURIComponent(q)}`));
    const docker = await search("docker");
    expect(docker.hits.length).toBeGreaterThan(0);
    expect(docker.hits.every((h) => [seed.dockerRoot, seed.dockerTip].includes(h.session_id))).toBe(true);
    expect(docker.titles[seed.dockerRoot]).toBe("Fix Docker build");
    for (const q of ["桂林", "桂"]) {
      const cjk = await search(q);
      expect(cjk.hits.map((h) => h.session_id)).toContain(seed.telegram);
    }
    for (const q of [
      '"unbalanced',
      "a AND OR b",
      "NEAR(",
      "*",
      "<script>",
      "'; DROP TABLE messages; --",
      "((((",
      "\u0000",
    ]) {
      const res = await get(browser, `/api/search?q=${encodeURIComponent(q)}`);
      expect(res.status, q).toBe(200);
    }
  });

  it("reads a long conversation in pages, around a message, and exports it", async () => {
    const { browser, seed } = await start();
    const first = await readAnswer<MessagesAnswer>(
      await get(browser, `/api/sessions/${seed.long}/messages?limit=100`),
    );
    expect(first.messages).toHaveLength(100);
    expect([first.before, first.after]).toEqual([0, seed.longMessages - 100]);
    const hit = (await readAnswer<SearchAnswer>(await get(browser, "/api/search?q=zanzibar"))).hits[0]!;
    const around = await readAnswer<MessagesAnswer>(
      await get(browser, `/api/sessions/${seed.long}/messages?around=${hit.id}&limit=100`),
    );
    expect(around.messages.map((m) => m.id)).toContain(hit.id);
    expect(around.before).toBe(321 - 25);
    const jsonl = await get(browser, `/api/sessions/${seed.long}/export?format=jsonl`);
    expect(jsonl.headers.get("content-disposition")).toBe(`attachment; filename="${seed.long}.jsonl"`);
    const lines = (await jsonl.text()).trim().split("\n");
    expect(lines).toHaveLength(2);
    expect(JSON.parse(lines[1]!).messages).toHaveLength(seed.longMessages);
    const md = await get(browser, `/api/sessions/${seed.long}/export?format=markdown`);
    expect(md.headers.get("content-type")).toMatch(/^text\/markdown/);
    expect(await md.text()).toContain("Long message 449");
    expect((await get(browser, "/api/sessions/nope/export?format=markdown")).status).toBe(404);
    expect((await get(browser, `/api/sessions/${seed.long}/messages?around=999999`)).status).toBe(400);
  });

  it("sends a change event when another process appends a message", async () => {
    const { browser, path, seed } = await start({ liveIntervalMs: 100 });
    const res = await get(browser, "/api/live");
    expect(res.headers.get("content-type")).toMatch(/^text\/event-stream/);
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let text = "";
    const until = async (needle: string) => {
      while (!text.includes(needle)) {
        const { value, done } = await reader.read();
        if (done) throw new Error(`stream ended before ${needle}`);
        text += decoder.decode(value);
      }
    };
    await until("event: ready");
    await new Promise((r) => setTimeout(r, 250));
    const writer = await openSessionStore({ path });
    await writer.appendMessage({ sessionId: seed.dockerTip, role: "user", content: "appended elsewhere" });
    await writer.close();
    await until("event: change");
    // The SQLite store's watchChanges names the session that received the message.
    await until("\n\n");
    const data = /event: change\ndata: (.*)\n/.exec(text)?.[1];
    expect(JSON.parse(data ?? "{}").sessionIds).toEqual([seed.dockerTip]);
    await reader.cancel();
  });
});
