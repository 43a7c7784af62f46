import type { SessionStore } from "@hermes/core";
import { Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import type { DeleteAnswer, PruneAnswer, RenameAnswer } from "./api-answers.js";
import { badRequest, notFound } from "./api-error.js";

async function jsonBody(req: { json(): Promise<unknown> }): Promise<Record<string, unknown>> {
  let body: unknown;
  try {
    body = await req.json();
  } catch {
    throw badRequest("The body must be JSON");
  }
  if (typeof body !== "object" || body === null || Array.isArray(body))
    throw badRequest("The body must be an object");
  return body as Record<string, unknown>;
}

/** Rename, delete and prune: mounted only with `--allow-writes`, each behind the CSRF guard. */
export function writeRoutes(store: SessionStore): Hono {
  const api = new Hono();
  api.use(bodyLimit({ maxSize: 16 * 1024 }));

  api.put("/sessions/:id/title", async (c) => {
    const body = await jsonBody(c.req);
    const title = body.title;
    if (title !== null && typeof title !== "string") throw badRequest("title must be a string or null");
    const id = c.req.param("id");
    if (!(await store.setSessionTitle(id, title === "" ? null : title))) throw notFound(`No session ${id}`);
    return c.json({ id, title: await store.getSessionTitle(id) } satisfies RenameAnswer);
  });

  api.delete("/sessions/:id", async (c) => {
    const id = c.req.param("id");
    if (!(await store.deleteSession(id))) throw notFound(`No session ${id}`);
    return c.json({ id, deleted: true } satisfies DeleteAnswer);
  });

  api.post("/prune", async (c) => {
    const body = await jsonBody(c.req);
    const days = body.olderThanDays;
    if (typeof days !== "number" || !Number.isInteger(days) || days < 1) {
      throw badRequest("olderThanDays must be a whole number of days, at least 1");
    }
    const source = body.source;
    if (source !== undefined && typeof source !== "string") throw badRequest("source must be a string");
    const removed = await store.pruneSessions({ olderThanDays: days, ...(source ? { source } : {}) });
    return c.json({ removed } satisfies PruneAnswer);
  });
  return api;
}
