import type { MiddlewareHandler } from "hono";
import { secureHeaders } from "hono/secure-headers";

/** The name of the Trusted Types policy the front end creates for sanitized Markdown. */
export const TRUSTED_TYPES_POLICY = "hermes-html";

/**
 * Strict headers on every response: scripts, styles and connections from this origin only
 * (no inline script or style, no eval), no plugins, no framing, no base tag, images from this
 * origin or `data:` only (stored Markdown cannot make the browser fetch a remote image), and
 * Trusted Types so the only HTML sink is the sanitizer's output.
 */
export function securityHeaders(): MiddlewareHandler {
  return secureHeaders({
    contentSecurityPolicy: {
      defaultSrc: ["'none'"],
      scriptSrc: ["'self'"],
      styleSrc: ["'self'"],
      imgSrc: ["'self'", "data:"],
      fontSrc: ["'self'"],
      connectSrc: ["'self'"],
      manifestSrc: ["'self'"],
      baseUri: ["'none'"],
      formAction: ["'self'"],
      frameAncestors: ["'none'"],
      objectSrc: ["'none'"],
      requireTrustedTypesFor: ["'script'"],
      // DOMPurify parses through a policy of its own before it sanitizes.
      trustedTypes: [TRUSTED_TYPES_POLICY, "dompurify"],
    },
    referrerPolicy: "no-referrer",
    crossOriginResourcePolicy: "same-origin",
    crossOriginOpenerPolicy: "same-origin",
    xFrameOptions: "DENY",
    strictTransportSecurity: false,
  });
}
