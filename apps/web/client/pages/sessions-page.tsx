import { useEffect, useMemo, useRef, useState } from "preact/hooks";
import { useLocation } from "preact-iso";
import { api, type ListedSession, type SessionFilters, WRITABLE } from "../api.js";
import { ChoiceSelect } from "../components/choice-select.js";
import { ErrorNote } from "../components/error-note.js";
import { PruneDialog } from "../components/prune-dialog.js";
import { onListKeys, SessionItem } from "../components/session-item.js";
import { countOf } from "../format.js";
import { coalesced, useLiveChanges } from "../live.js";
import { useDocumentTitle } from "../use-document-title.js";

function filtersOf(query: Record<string, string>): SessionFilters {
  return {
    source: query.source ? query.source.split(",") : undefined,
    model: query.model ? query.model.split(",") : undefined,
    from: query.from || undefined,
    to: query.to || undefined,
    title: query.title || undefined,
  };
}

/** Every session, newest activity first, with filters; pages load as the list is scrolled. */
export function SessionsPage() {
  useDocumentTitle("Sessions");
  const { query, route } = useLocation();
  const filters = filtersOf(query);
  const key = JSON.stringify(filters);
  const [options, setOptions] = useState<{ sources: string[]; models: string[] }>({
    sources: [],
    models: [],
  });
  const [rows, setRows] = useState<ListedSession[]>([]);
  const [cursor, setCursor] = useState<string | null>(null);
  const [pages, setPages] = useState(0);
  const [loading, setLoading] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [fresh, setFresh] = useState(false);
  const sentinel = useRef<HTMLDivElement>(null);
  const [title, setTitle] = useState(filters.title ?? "");

  useEffect(() => {
    api.filters().then(setOptions, setError);
  }, []);

  const loadFirst = async () => {
    setLoading(true);
    try {
      const page = await api.sessions(filters);
      setRows(page.sessions);
      setCursor(page.nextCursor);
      setPages(1);
      setFresh(false);
      setError(null);
    } catch (e) {
      setError(e);
    } finally {
      setLoading(false);
    }
  };
  useEffect(() => {
    void loadFirst();
  }, [key]);

  const loadMore = async () => {
    if (cursor === null || loading) return;
    setLoading(true);
    try {
      const page = await api.sessions(filters, cursor);
      setRows((r) => [...r, ...page.sessions]);
      setCursor(page.nextCursor);
      setPages((n) => n + 1);
    } catch (e) {
      setError(e);
    } finally {
      setLoading(false);
    }
  };

  useEffect(() => {
    const el = sentinel.current;
    if (!el) return;
    const observer = new IntersectionObserver((entries) => {
      if (entries.some((e) => e.isIntersecting)) void loadMore();
    });
    observer.observe(el);
    return () => observer.disconnect();
  });

  // New sessions and messages: the first page is read again while it is all that is shown;
  // deeper in the list, a button offers it (the rows under the reader do not move).
  const loadFirstRef = useRef(loadFirst);
  loadFirstRef.current = loadFirst;
  const refresh = useMemo(() => coalesced(() => loadFirstRef.current()), []);
  useLiveChanges(() => {
    if (pages <= 1) refresh();
    else setFresh(true);
  });

  const set = (patch: Partial<Record<keyof SessionFilters, string>>) => {
    const next = { ...query, ...patch };
    const search = new URLSearchParams(Object.entries(next).filter(([, v]) => v !== "" && v !== undefined));
    const s = search.toString();
    route(`/${s ? `?${s}` : ""}`, true);
  };

  useEffect(() => {
    if (title === (filters.title ?? "")) return;
    const timer = setTimeout(() => set({ title }), 300);
    return () => clearTimeout(timer);
  });

  return (
    <section aria-labelledby="sessions-heading">
      <div class="page-head">
        <h1 id="sessions-heading">Sessions</h1>
        {WRITABLE ? <PruneDialog sources={options.sources} onPruned={loadFirst} /> : null}
      </div>
      <form class="filters" onSubmit={(e) => e.preventDefault()}>
        <ChoiceSelect
          label="Source"
          anyLabel="All sources"
          value={query.source ?? ""}
          choices={options.sources}
          onChange={(v) => set({ source: v })}
        />
        <ChoiceSelect
          label="Model"
          anyLabel="All models"
          value={query.model ?? ""}
          choices={options.models}
          onChange={(v) => set({ model: v })}
        />
        <label>
          Started from
          <input
            type="date"
            value={query.from ?? ""}
            onChange={(e) => set({ from: e.currentTarget.value })}
          />
        </label>
        <label>
          to
          <input type="date" value={query.to ?? ""} onChange={(e) => set({ to: e.currentTarget.value })} />
        </label>
        <label class="grow">
          Title or id
          <input
            type="search"
            value={title}
            placeholder="Filter by title or id prefix"
            onInput={(e) => setTitle(e.currentTarget.value)}
          />
        </label>
      </form>
      {fresh ? (
        <button type="button" class="notice" onClick={loadFirst}>
          New activity: show the newest sessions
        </button>
      ) : null}
      <ErrorNote error={error} />
      <ol class="session-list" aria-label="Sessions" aria-busy={loading} onKeyDown={onListKeys}>
        {rows.map((row) => (
          <SessionItem key={row.id} row={row} />
        ))}
      </ol>
      {!loading && rows.length === 0 && !error ? <p class="empty">No sessions match.</p> : null}
      <div ref={sentinel} class="sentinel" />
      {cursor !== null ? (
        <button type="button" class="more" onClick={loadMore} disabled={loading}>
          {loading ? "Loading…" : "More sessions"}
        </button>
      ) : rows.length > 0 ? (
        <p class="dim end-of-list">All {countOf(rows.length, "session")} shown.</p>
      ) : null}
    </section>
  );
}
