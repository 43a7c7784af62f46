import type { ComponentChildren } from "preact";
import { useDocumentTitle } from "../use-document-title.js";

/**
 * What an address names does not exist (an unknown page, a session id the server answered
 * 404 for): a heading that says so, why, and the ways back, and the document title to match.
 */
export function NotFound({ heading, children }: { heading: string; children: ComponentChildren }) {
  useDocumentTitle(heading);
  return (
    <section aria-labelledby="not-found-heading" class="not-found">
      <h1 id="not-found-heading">{heading}</h1>
      <p>{children}</p>
      <nav aria-label="Ways back">
        <ul class="ways-back">
          <li>
            <a href="/">All sessions</a>
          </li>
          <li>
            <a href="/search">Search messages</a>
          </li>
        </ul>
      </nav>
    </section>
  );
}
