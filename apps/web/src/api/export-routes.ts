import { PassThrough, Readable } from "node:stream";
import type { SessionStore } from "@hermes/core";
import { Hono } from "hono";
import { badRequest, notFound } from "./api-error.js";

/** A file name made of the session id's safe characters. */
const fileName = (id: string, ext: string) => `${id.replace(/[^A-Za-z0-9._-]/g, "_").slice(0, 120)}.${ext}`;

/** Downloads of one session: the portable JSONL (what `import` reads) or Markdown. */
export function exportRoutes(store: SessionStore): Hono {
  const api = new Hono();
  api.get("/sessions/:id/export", async (c) => {
    const id = c.req.param("id");
    const format = c.req.query("format") ?? "jsonl";
    if (format === "markdown") {
      const markdown = await store.exportSessionMarkdown(id);
      if (markdown === null) throw notFound(`No session ${id}`);
      c.header("Content-Disposition", `attachment; filename="${fileName(id, "md")}"`);
      return c.body(markdown, 200, { "Content-Type": "text/markdown; charset=utf-8" });
    }
    if (format !== "jsonl") throw badRequest("format must be jsonl or markdown");
    if ((await store.getSession(id)) === null) throw notFound(`No session ${id}`);
    // Streamed: a session of 100,000 messages never sits in memory as one string.
    const out = new PassThrough();
    store.exportJsonl(out, { sessionIds: [id] }).then(
      () => out.end(),
      (error: unknown) => out.destroy(error instanceof Error ? error : new Error(String(error))),
    );
    c.header("Content-Disposition", `attachment; filename="${fileName(id, "jsonl")}"`);
    return c.body(Readable.toWeb(out) as ReadableStream, 200, {
      "Content-Type": "application/x-ndjson; charset=utf-8",
    });
  });
  return api;
}
