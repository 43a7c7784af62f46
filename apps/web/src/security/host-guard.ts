import { networkInterfaces } from "node:os";
import type { MiddlewareHandler } from "hono";

const LOOPBACK_NAMES = ["127.0.0.1", "localhost", "[::1]"];

/** Whether `host` (as given to `--host`) is a loopback address. */
export function isLoopbackHost(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, "").toLowerCase();
  return h === "localhost" || h === "::1" || /^127(\.\d{1,3}){3}$/.test(h);
}

/**
 * The `Host` headers the server answers to: the loopback names, the address it is bound to,
 * and for a wildcard bind (0.0.0.0, ::) every address of the machine's interfaces, each with
 * the port. Anything else is a DNS-rebinding attempt or a misrouted request.
 */
export function allowedHosts(bindHost: string, port: number, extra: readonly string[] = []): Set<string> {
  const names = new Set<string>([...LOOPBACK_NAMES, ...extra.map((h) => h.toLowerCase())]);
  const bare = bindHost.replace(/^\[|\]$/g, "").toLowerCase();
  const wildcard = bare === "0.0.0.0" || bare === "::";
  if (!wildcard) names.add(bare.includes(":") ? `[${bare}]` : bare);
  else {
    for (const list of Object.values(networkInterfaces())) {
      for (const a of list ?? []) names.add(a.family === "IPv6" ? `[${a.address.toLowerCase()}]` : a.address);
    }
  }
  return new Set([...names].map((n) => `${n}:${port}`));
}

/** Refuses (421) a request whose `Host` header is not one of `allowed`. */
export function hostGuard(allowed: ReadonlySet<string>): MiddlewareHandler {
  return async (c, next) => {
    const host = (c.req.header("host") ?? "").toLowerCase();
    if (!allowed.has(host)) {
      return c.text("This server answers only to its own address (Host header refused).\n", 421);
    }
    await next();
  };
}
