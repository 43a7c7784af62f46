import { renderToolCallSnippet, snippetParts, UNTITLED_SESSION } from "@hermes/core";
import { useEffect, useState } from "preact/hooks";
import { useLocation } from "preact-iso";
import { api, type SearchHit } from "../api.js";
import { ChoiceSelect } from "../components/choice-select.js";
import { ErrorNote } from "../components/error-note.js";
import { messageLink } from "../components/message-view.js";
import { onListKeys } from "../components/session-item.js";
import { formatTime, isoTime } from "../format.js";
import { useDocumentTitle } from "../use-document-title.js";

/**
 * A snippet with its matches marked, as text nodes and `<mark>` elements (never HTML), cut by
 * `snippetParts` of `@hermes/core` as the CLI cuts it. A snippet from a tool call's JSON reads
 * as the call (`terminal({"cmd": "docker build"})`, `renderToolCallSnippet`), in code type.
 */
export function Snippet({ text, query }: { text: string; query: string }) {
  const call = renderToolCallSnippet(text);
  const parts = snippetParts(call, query);
  return (
    <span class={call === text ? "snippet" : "snippet tool-call-snippet"}>
      {parts.map((p, i) => (p.match ? <mark key={i}>{p.text}</mark> : p.text))}
    </span>
  );
}

const PAGE = 20;

/** Search over every message, English and CJK, with filters; a hit opens its conversation there. */
export function SearchPage() {
  const { query, route } = useLocation();
  const q = query.q ?? "";
  const role = query.role ?? "";
  const source = query.source ?? "";
  useDocumentTitle(q ? `Search: ${q}` : "Search");
  const [input, setInput] = useState(q);
  const [sources, setSources] = useState<string[]>([]);
  const [hits, setHits] = useState<SearchHit[]>([]);
  const [names, setNames] = useState<Record<string, string>>({});
  const [more, setMore] = useState(false);
  const [loading, setLoading] = useState(false);
  const [error, setError] = useState<unknown>(null);

  useEffect(() => {
    api.filters().then((f) => setSources(f.sources), setError);
  }, []);

  const run = async (offset: number) => {
    if (q.trim() === "") {
      setHits([]);
      return;
    }
    setLoading(true);
    try {
      const res = await api.search({
        q,
        role: role ? [role] : undefined,
        source: source ? [source] : undefined,
        offset,
        limit: PAGE,
      });
      setHits((h) => (offset === 0 ? res.hits : [...h, ...res.hits]));
      setNames((n) => ({ ...n, ...res.names }));
      setMore(res.hits.length === PAGE);
      setError(null);
    } catch (e) {
      setError(e);
    } finally {
      setLoading(false);
    }
  };
  useEffect(() => {
    setInput(q);
    void run(0);
  }, [q, role, source]);

  const go = (patch: Record<string, string>) => {
    const next = new URLSearchParams(
      Object.entries({ q, role, source, ...patch }).filter(([, v]) => v !== ""),
    ).toString();
    route(`/search${next ? `?${next}` : ""}`);
  };

  return (
    <section aria-labelledby="search-heading">
      <h1 id="search-heading">Search</h1>
      <form
        class="filters"
        onSubmit={(e) => {
          e.preventDefault();
          go({ q: input });
        }}
      >
        <label class="grow">
          Search messages
          <input
            type="search"
            name="q"
            value={input}
            placeholder="docker, &quot;connection refused&quot;, deploy*, 桂林"
            onInput={(e) => setInput(e.currentTarget.value)}
          />
        </label>
        <label>
          Role
          <select value={role} onChange={(e) => go({ role: e.currentTarget.value })}>
            <option value="">Any role</option>
            <option value="user">user</option>
            <option value="assistant">assistant</option>
            <option value="tool">tool</option>
          </select>
        </label>
        <ChoiceSelect
          label="Source"
          anyLabel="All sources"
          value={source}
          choices={sources}
          onChange={(v) => go({ source: v })}
        />
        <button type="submit">Search</button>
      </form>
      <ErrorNote error={error} />
      {q && !loading && hits.length === 0 && !error ? <p class="empty">No matches for “{q}”.</p> : null}
      <ol class="hits" aria-label="Search results" aria-busy={loading} onKeyDown={onListKeys}>
        {hits.map((hit) => (
          <li key={hit.id} class="hit-item">
            <a class="row-link" href={messageLink(hit.session_id, hit)}>
              {names[hit.session_id] ?? UNTITLED_SESSION}
            </a>
            <div class="dim">
              {hit.source} · {hit.role}
              {hit.tool_name ? ` (${hit.tool_name})` : ""} ·{" "}
              <time dateTime={isoTime(hit.timestamp)}>{formatTime(hit.timestamp)}</time>
            </div>
            <p>
              <Snippet text={hit.snippet} query={q} />
            </p>
            {hit.context.length > 1 ? (
              <ul class="context" aria-label="Context">
                {hit.context.map((c, i) => (
                  <li key={i}>
                    <span class="role">{c.role}</span>{" "}
                    {c.content.length > 160 ? `${c.content.slice(0, 160)}…` : c.content}
                  </li>
                ))}
              </ul>
            ) : null}
          </li>
        ))}
      </ol>
      {more ? (
        <button type="button" class="more" disabled={loading} onClick={() => run(hits.length)}>
          {loading ? "Searching…" : "More results"}
        </button>
      ) : null}
    </section>
  );
}
