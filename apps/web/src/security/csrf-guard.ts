import type { MiddlewareHandler } from "hono";
import { sameSecret } from "./access-guard.js";

/** The request header a write must carry with the page's CSRF token. */
export const CSRF_HEADER = "x-hermes-csrf";

/**
 * CSRF protection of writes (every method but GET and HEAD): the browser must say the request
 * comes from this very origin (`Origin` present and equal; `Sec-Fetch-Site`, when sent,
 * `same-origin`), and the request must carry the token the page was served with, which
 * another origin cannot read. A missing `Origin` is refused: browsers send it on every
 * cross-origin and every same-origin non-GET fetch.
 */
export function csrfGuard(csrfToken: string): MiddlewareHandler {
  return async (c, next) => {
    if (c.req.method === "GET" || c.req.method === "HEAD") return next();
    const own = new URL(c.req.url).origin;
    const site = c.req.header("sec-fetch-site");
    const fromHere = c.req.header("origin") === own && (site === undefined || site === "same-origin");
    if (!fromHere || !sameSecret(c.req.header(CSRF_HEADER), csrfToken)) {
      return c.json({ error: "CSRF", message: "Writes are accepted from this server's own page only" }, 403);
    }
    await next();
  };
}
