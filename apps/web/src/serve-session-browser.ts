import type { AddressInfo } from "node:net";
import type { SessionStore } from "@hermes/core";
import { serve } from "@hono/node-server";
import { createWebApp } from "./create-app.js";
import { type ChangeFeed, storeChangeFeed } from "./live/change-feed.js";
import { openServedStore } from "./open-store.js";
import { newToken } from "./security/access-guard.js";
import { allowedHosts, isLoopbackHost } from "./security/host-guard.js";
import { WebServerError } from "./web-server-error.js";

/** Options of {@link serveSessionBrowser} (the flags of `hermes-sessions serve`). */
export interface ServeOptions {
  /** A `state.db` path or a `postgres://` URL; default `$HERMES_HOME/state.db`, else `~/.hermes/state.db`. */
  db?: string;
  /** Port (default 8787; 0 picks a free one). */
  port?: number;
  /** Address to listen on (default 127.0.0.1). Anything but loopback needs `token`. */
  host?: string;
  /** The access token; default a new random one. At least 16 characters. */
  token?: string;
  /** Enable rename, delete and prune in the UI; otherwise the store is opened read-only. */
  allowWrites?: boolean;
  /** More `Host` header names to answer to (a DNS name of this machine), without the port. */
  allowedHosts?: string[];
  /** How often the Live view's change check runs, in ms (default 250 on a store with `watchChanges`, else 1000). */
  liveIntervalMs?: number;
  /** Serve this store instead of opening `db` (it is not closed by `close()`). */
  store?: SessionStore;
}

/** A running session browser. */
export interface RunningSessionBrowser {
  /** The address to open, with the access token. */
  url: string;
  /** The address without the token. */
  origin: string;
  port: number;
  token: string;
  /**
   * Whether the UI offers rename, delete and prune: `allowWrites`, unless the store is read-only
   * anyway (a newer agent's file, a folder this process cannot write); then `readOnlyReason` says why.
   */
  writable: boolean;
  readOnlyReason: string | null;
  /** Stops listening, ends live streams and closes the store it opened. */
  close(): Promise<void>;
}

/**
 * Starts the session browser: opens the store (read-only unless `allowWrites`), listens on
 * `host:port` and resolves once it accepts connections.
 *
 * @example
 * const browser = await serveSessionBrowser({ db: "state.db", port: 0 })
 * console.log(browser.url)   // http://127.0.0.1:41234/?token=…
 * await browser.close()
 */
export async function serveSessionBrowser(o: ServeOptions = {}): Promise<RunningSessionBrowser> {
  const host = o.host ?? "127.0.0.1";
  if (!isLoopbackHost(host) && o.token === undefined) {
    throw new WebServerError(
      "TOKEN_REQUIRED",
      `Refusing to listen on ${host} (not a loopback address) without an explicit --token: anyone on the network could try to reach it`,
    );
  }
  if (o.token !== undefined && o.token.length < 16) {
    throw new WebServerError("WEAK_TOKEN", "The access token must be at least 16 characters long");
  }
  const token = o.token ?? newToken();
  const store = o.store ?? (await openServedStore({ db: o.db, allowWrites: o.allowWrites ?? false }));
  const allowWrites = (o.allowWrites ?? false) && !store.readOnly;
  const changes: ChangeFeed = storeChangeFeed(store, { intervalMs: o.liveIntervalMs });
  let server: ReturnType<typeof serve> | undefined;
  try {
    const port = await new Promise<number>((resolve, reject) => {
      // The app needs the port for its Host check; it is built once the port is known.
      let app: ReturnType<typeof createWebApp> | undefined;
      const s = serve(
        {
          fetch: (req, env) => app!.fetch(req, env),
          port: o.port ?? 8787,
          hostname: host,
        },
        (info: AddressInfo) => {
          app = createWebApp({
            store,
            token,
            csrfToken: newToken(),
            cookieName: `hermes_token_${info.port}`,
            hosts: allowedHosts(host, info.port, o.allowedHosts),
            allowWrites,
            changes,
          });
          resolve(info.port);
        },
      );
      s.once("error", (error: NodeJS.ErrnoException) =>
        reject(
          new WebServerError(
            "LISTEN_FAILED",
            `Cannot listen on ${host}:${o.port ?? 8787}: ${error.message}`,
            { cause: error },
          ),
        ),
      );
      server = s;
    });
    const shown = host.includes(":") ? `[${host}]` : host === "0.0.0.0" ? "127.0.0.1" : host;
    const origin = `http://${shown}:${port}`;
    let closing: Promise<void> | undefined;
    return {
      url: `${origin}/?token=${encodeURIComponent(token)}`,
      origin,
      port,
      token,
      writable: allowWrites,
      readOnlyReason: store.readOnlyReason,
      close() {
        closing ??= (async () => {
          changes.close();
          await new Promise<void>((resolve) => {
            server!.close(() => resolve());
            // Live streams stay open until told otherwise.
            (server as unknown as { closeAllConnections?: () => void }).closeAllConnections?.();
          });
          if (o.store === undefined) await store.close();
        })();
        return closing;
      },
    };
  } catch (error) {
    changes.close();
    if (o.store === undefined) await store.close();
    throw error;
  }
}
