import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { serveStatic } from "@hono/node-server/serve-static";
import type { Context, MiddlewareHandler } from "hono";

/** Where `pnpm build` puts the front end: `dist/client` beside this module. */
export const CLIENT_DIR = fileURLToPath(new URL("./client/", import.meta.url));

/**
 * The built front end's files under `/assets/` (hashed names, so cached for good), answered
 * with the Brotli or gzip file written at build time when the browser accepts it.
 */
export function clientAssets(clientDir: string = CLIENT_DIR): MiddlewareHandler {
  return serveStatic({
    root: clientDir,
    precompressed: true,
    onFound: (_path, c) => {
      c.header("Cache-Control", "public, max-age=31536000, immutable");
    },
  });
}

const escapeAttribute = (s: string) =>
  s.replace(/[&"<>]/g, (ch) => ({ "&": "&amp;", '"': "&quot;", "<": "&lt;", ">": "&gt;" })[ch] ?? ch);

/** The single page, with the CSRF token and the write switch in `<meta>` tags (no inline script). */
export function indexPage(o: {
  csrfToken: string;
  writable: boolean;
  clientDir?: string;
}): (c: Context) => Response {
  const template = readFileSync(`${o.clientDir ?? CLIENT_DIR}index.html`, "utf8");
  const html = template
    .replace("%CSRF%", escapeAttribute(o.csrfToken))
    .replace("%WRITABLE%", o.writable ? "true" : "false");
  return (c) => {
    c.header("Cache-Control", "no-store");
    return c.html(html);
  };
}
