import { readSessionName, type SessionStore, sessionPreview, UNTITLED_SESSION } from "@hermes/core";
import { Hono } from "hono";
import type {
  FiltersAnswer,
  MessagesAnswer,
  SearchAnswer,
  SessionAnswer,
  SessionsAnswer,
  UsageAnswer,
} from "./api-answers.js";
import { badRequest, notFound } from "./api-error.js";
import { currentRowOfUid } from "./message-by-uid.js";
import { int, list, text, time } from "./query-params.js";

const USAGE_GROUPS = ["day", "model", "source"] as const;

/** Titles and names (`sessionDisplayName`) of the sessions of search hits, each read once. */
async function namesOf(
  store: SessionStore,
  ids: Iterable<string>,
): Promise<Pick<SearchAnswer, "titles" | "names">> {
  const titles: Record<string, string | null> = {};
  const names: Record<string, string> = {};
  for (const id of new Set(ids)) {
    const session = await store.getSession(id);
    titles[id] = session?.title ?? null;
    names[id] = (session !== null ? await readSessionName(store, session) : null) ?? UNTITLED_SESSION;
  }
  return { titles, names };
}

/** The JSON API the pages read: sessions, one session, its messages, search, usage. */
export function readRoutes(store: SessionStore): Hono {
  const api = new Hono();

  // What the filters offer: every source and model of the sessions the list shows (a newer
  // agent's archived and hidden sessions are not listed, so their sources are not offered).
  api.get("/filters", async (c) => {
    const [sources, models] = await Promise.all([
      store.usageStats({ groupBy: "source" }),
      store.usageStats({ groupBy: "model" }),
    ]);
    return c.json({
      sources: sources.map((r) => r.group).filter((g): g is string => g !== null),
      models: models.map((r) => r.group).filter((g): g is string => g !== null),
    } satisfies FiltersAnswer);
  });

  api.get("/sessions", async (c) => {
    const page = await store.listSessionPage({
      sources: list(c, "source"),
      models: list(c, "model"),
      startedAfter: time(c, "from"),
      startedBefore: time(c, "to", true),
      title: text(c, "title", 200),
      limit: int(c, "limit", 1, 200) ?? 50,
      cursor: text(c, "cursor"),
    });
    // A list shows no system prompt or model config: they are most of a row's bytes.
    const sessions = page.sessions.map(({ system_prompt: _, model_config: __, ...row }) => row);
    return c.json({ sessions, nextCursor: page.nextCursor } satisfies SessionsAnswer);
  });

  api.get("/sessions/:id", async (c) => {
    const id = c.req.param("id");
    const [session, lineage] = await Promise.all([
      store.getSession(id),
      store.getLineage(id, { maxDescendants: 200 }),
    ]);
    if (session === null || lineage === null) throw notFound(`No session ${id}`);
    // An untitled session is named by its first user message (`sessionDisplayName`); read
    // whatever the title, so that the page can name the session if it is renamed to nothing.
    const preview = await sessionPreview(store, id);
    return c.json({ session, lineage, preview } satisfies SessionAnswer);
  });

  api.get("/sessions/:id/messages", async (c) => {
    const limit = int(c, "limit", 1, 500) ?? 100;
    const after = int(c, "after", 0, Number.MAX_SAFE_INTEGER);
    const before = int(c, "before", 0, Number.MAX_SAFE_INTEGER);
    const around = int(c, "around", 0, Number.MAX_SAFE_INTEGER);
    const from = text(c, "from");
    if (from !== undefined && from !== "start" && from !== "end")
      throw badRequest("from must be start or end");
    // `uid`: the page around the current version of a message, by its stable id (a link `#m-<uid>`).
    const uid = text(c, "uid", 64);
    const at = uid === undefined ? undefined : await currentRowOfUid(store, c.req.param("id"), uid);
    if (at === null) throw notFound(`No message ${uid} in session ${c.req.param("id")}`);
    const page = await store.getMessagePage(c.req.param("id"), {
      limit,
      ...(at !== undefined ? { aroundId: at } : {}),
      ...(after !== undefined ? { afterId: after } : {}),
      ...(before !== undefined ? { beforeId: before } : {}),
      ...(around !== undefined ? { aroundId: around } : {}),
      ...(from !== undefined ? { from } : {}),
    });
    return c.json(page satisfies MessagesAnswer);
  });

  api.get("/search", async (c) => {
    const q = text(c, "q", 2000) ?? "";
    if (q.trim() === "") return c.json({ hits: [], titles: {}, names: {} } satisfies SearchAnswer);
    const hits = await store.searchMessages(q, {
      ...(list(c, "source") ? { sourceFilter: list(c, "source") } : {}),
      ...(list(c, "role") ? { roleFilter: list(c, "role") } : {}),
      limit: int(c, "limit", 1, 100) ?? 20,
      offset: int(c, "offset", 0, 10_000) ?? 0,
    });
    return c.json({
      hits,
      ...(await namesOf(
        store,
        hits.map((h) => h.session_id),
      )),
    } satisfies SearchAnswer);
  });

  api.get("/usage", async (c) => {
    const groupBy = c.req.query("groupBy") ?? "day";
    if (!(USAGE_GROUPS as readonly string[]).includes(groupBy)) {
      throw badRequest("groupBy must be day, model or source");
    }
    const rows = await store.usageStats({
      groupBy: groupBy as (typeof USAGE_GROUPS)[number],
      ...(time(c, "from") !== undefined ? { since: time(c, "from") } : {}),
      ...(time(c, "to", true) !== undefined ? { until: time(c, "to", true) } : {}),
      ...(text(c, "source") !== undefined ? { source: text(c, "source") } : {}),
    });
    return c.json({ groupBy, rows } satisfies UsageAnswer);
  });

  return api;
}
