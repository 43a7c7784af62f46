import { useEffect, useMemo, useState } from "preact/hooks";
import { api, type ListedSession } from "../api.js";
import { ErrorNote } from "../components/error-note.js";
import { liveState, onListKeys, SessionItem } from "../components/session-item.js";
import { formatTime } from "../format.js";
import { coalesced, useLiveChanges } from "../live.js";
import { useDocumentTitle } from "../use-document-title.js";

/** The most recently active sessions, kept current by server-sent events without a reload. */
export function LivePage() {
  useDocumentTitle("Live");
  const [rows, setRows] = useState<ListedSession[]>([]);
  const [seen, setSeen] = useState<number | null>(null);
  const [error, setError] = useState<unknown>(null);
  const refresh = () =>
    api.sessions({}, null, 20).then((page) => {
      setRows(page.sessions);
      setError(null);
    }, setError);
  useEffect(() => {
    void refresh();
  }, []);
  const refreshOnce = useMemo(() => coalesced(refresh), []);
  useLiveChanges((change) => {
    setSeen(change.seenAt / 1000);
    refreshOnce();
  });
  const live = rows.filter((r) => liveState(r) !== null).length;
  return (
    <section aria-labelledby="live-heading">
      <h1 id="live-heading">Live</h1>
      <p class="dim" role="status">
        {live} open {live === 1 ? "session" : "sessions"} among the 20 most recently active · last change seen{" "}
        {seen === null ? "— (watching)" : formatTime(seen)}
      </p>
      <p class="dim">
        New sessions and messages appear here as the agent writes. Open one and tick “Follow” to stay at its
        end.
      </p>
      <ErrorNote error={error} />
      <ol class="session-list" aria-label="Recently active sessions" onKeyDown={onListKeys}>
        {rows.map((row) => (
          <SessionItem key={`${row.id}:${row.chain_last_active}`} row={row} />
        ))}
      </ol>
    </section>
  );
}
