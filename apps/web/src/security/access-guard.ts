import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import type { MiddlewareHandler } from "hono";
import { getCookie, setCookie } from "hono/cookie";

/** A new random access token (URL-safe, 192 bits). */
export function newToken(): string {
  return randomBytes(24).toString("base64url");
}

/** Compares two secrets in constant time (hashed first, so lengths do not leak either). */
export function sameSecret(given: string | undefined, expected: string): boolean {
  if (given === undefined) return false;
  const a = createHash("sha256").update(given).digest();
  const b = createHash("sha256").update(expected).digest();
  return timingSafeEqual(a, b);
}

/**
 * Requires the access token on every request: `?token=` (the printed URL; answered with a
 * cookie and a redirect to the same address without it, so the token stays out of history and
 * bookmarks), the cookie set then, or `Authorization: Bearer <token>` for scripts.
 */
export function accessGuard(token: string, cookieName: string): MiddlewareHandler {
  return async (c, next) => {
    const fromQuery = c.req.query("token");
    if (fromQuery !== undefined && sameSecret(fromQuery, token)) {
      setCookie(c, cookieName, token, { httpOnly: true, sameSite: "Strict", path: "/" });
      if (c.req.method === "GET" && !c.req.path.startsWith("/api/")) {
        const url = new URL(c.req.url);
        url.searchParams.delete("token");
        return c.redirect(`${url.pathname}${url.search}`, 303);
      }
      return next();
    }
    const bearer = /^Bearer (.+)$/.exec(c.req.header("authorization") ?? "")?.[1];
    if (sameSecret(getCookie(c, cookieName), token) || sameSecret(bearer, token)) return next();
    return c.text(
      "Access token missing or wrong: open the address that `hermes-sessions serve` printed.\n",
      401,
    );
  };
}
