import { useEffect } from "preact/hooks";

/** The name of the application, the end of every document title. */
export const APP_TITLE = "Hermes sessions";

/**
 * Sets the document's title (the tab, history, a screen reader's page name) to the page's
 * subject and the application's name ("Fix Docker Build · Hermes sessions"); `null` leaves
 * the application's name alone.
 */
export function useDocumentTitle(subject: string | null): void {
  useEffect(() => {
    document.title = subject === null || subject === "" ? APP_TITLE : `${subject} · ${APP_TITLE}`;
  }, [subject]);
}
