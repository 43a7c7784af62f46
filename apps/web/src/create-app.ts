import type { SessionStore } from "@hermes/core";
import { Hono } from "hono";
import { compress } from "hono/compress";
import { errorResponse } from "./api/api-error.js";
import { exportRoutes } from "./api/export-routes.js";
import { liveRoutes } from "./api/live-routes.js";
import { readRoutes } from "./api/read-routes.js";
import { writeRoutes } from "./api/write-routes.js";
import { CLIENT_DIR, clientAssets, indexPage } from "./client-assets.js";
import type { ChangeFeed } from "./live/change-feed.js";
import { accessGuard } from "./security/access-guard.js";
import { csrfGuard } from "./security/csrf-guard.js";
import { hostGuard } from "./security/host-guard.js";
import { securityHeaders } from "./security/security-headers.js";

/** What the app needs: the store, its secrets and what it may do. */
export interface WebAppOptions {
  store: SessionStore;
  /** The access token every request must carry (query once, then cookie). */
  token: string;
  /** The token writes must echo (served in the page). */
  csrfToken: string;
  /** Cookie name; include the port, as cookies are shared by all ports of a host. */
  cookieName: string;
  /** `Host` header values answered (see `allowedHosts`). */
  hosts: ReadonlySet<string>;
  /** Mount rename, delete and prune. */
  allowWrites: boolean;
  changes: ChangeFeed;
  /** The built front end (default: the package's `dist/client`). */
  clientDir?: string;
}

/**
 * The session browser as a Hono app: guards first (Host header, access token, CSRF), strict
 * headers on everything, then the JSON API under `/api`, the assets, and the single page for
 * every other path (the front end routes in the browser).
 */
export function createWebApp(o: WebAppOptions): Hono {
  const app = new Hono();
  app.onError(errorResponse);
  app.use(securityHeaders());
  app.use(hostGuard(o.hosts));
  app.use(accessGuard(o.token, o.cookieName));
  app.use(csrfGuard(o.csrfToken));
  app.use("/api/*", async (c, next) => {
    await next();
    c.header("Cache-Control", "no-store");
  });
  // Server-sent events must not be buffered by compression, so they are mounted before it.
  app.route("/api", liveRoutes(o.changes));
  app.use("/api/*", compress());
  app.route("/api", readRoutes(o.store));
  app.route("/api", exportRoutes(o.store));
  if (o.allowWrites) app.route("/api", writeRoutes(o.store));
  app.all("/api/*", (c) =>
    c.json(
      o.allowWrites || c.req.method === "GET"
        ? { error: "NOT_FOUND", message: "No such API" }
        : { error: "READ_ONLY", message: "This server is read-only: start it with --allow-writes" },
      o.allowWrites || c.req.method === "GET" ? 404 : 403,
    ),
  );
  app.use("/assets/*", clientAssets(o.clientDir ?? CLIENT_DIR));
  app.get("/assets/*", (c) => c.text("Not found\n", 404));
  app.get("*", indexPage({ csrfToken: o.csrfToken, writable: o.allowWrites, clientDir: o.clientDir }));
  return app;
}
