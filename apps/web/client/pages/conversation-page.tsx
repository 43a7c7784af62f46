import { sessionDisplayName } from "@hermes/core";
import { Fragment } from "preact";
import { useEffect, useRef, useState } from "preact/hooks";
import { useLocation, useRoute } from "preact-iso";
import { ApiError, api, type Lineage, type MessageRow, type SessionRow, WRITABLE } from "../api.js";
import { ConfirmDialog } from "../components/confirm-dialog.js";
import { ErrorNote } from "../components/error-note.js";
import { LineageGraph } from "../components/lineage-graph.js";
import { MessageView } from "../components/message-view.js";
import { NotFound } from "../components/not-found.js";
import { SessionMarks } from "../components/session-marks.js";
import { countOf, formatNumber, formatTime, formatUsd } from "../format.js";
import { useLiveChanges } from "../live.js";
import { useDocumentTitle } from "../use-document-title.js";

const PAGE = 100;
/** At most this many messages are in the page at once; older ones are let go as more load. */
const WINDOW = 300;

interface Window {
  rows: MessageRow[];
  before: number;
  after: number;
}

/**
 * The message count: a newer agent's counter holds the rows in its context (active rows only),
 * while the page also shows the rows a compaction summarized; when `shown` differs, both, named.
 */
function messagesFigure(s: SessionRow, shown: number | null): string {
  if (shown === null || shown === s.message_count || !("archived" in s)) return formatNumber(s.message_count);
  return `${formatNumber(s.message_count)} in the agent's context, ${formatNumber(shown)} shown`;
}

function Figures({ s, shown }: { s: SessionRow; shown: number | null }) {
  const items: Array<[string, string]> = [
    ["Source", s.source],
    ["Model", s.model ?? "—"],
    ["Started", formatTime(s.started_at)],
    ["Ended", s.ended_at === null ? "not ended" : `${formatTime(s.ended_at)} (${s.end_reason ?? "?"})`],
    ["Messages", messagesFigure(s, shown)],
    ["Tool calls", formatNumber(s.tool_call_count)],
    ["API calls", formatNumber(s.api_call_count)],
    ["Input tokens", formatNumber(s.input_tokens)],
    ["Output tokens", formatNumber(s.output_tokens)],
    ["Cache read / write", `${formatNumber(s.cache_read_tokens)} / ${formatNumber(s.cache_write_tokens)}`],
    ["Reasoning tokens", formatNumber(s.reasoning_tokens)],
    ["Cost (estimated)", formatUsd(s.estimated_cost_usd)],
    ["Cost (actual)", formatUsd(s.actual_cost_usd)],
  ];
  return (
    <dl class="figures">
      {items.map(([k, v]) => (
        <div key={k}>
          <dt>{k}</dt>
          <dd>{v}</dd>
        </div>
      ))}
    </dl>
  );
}

function SessionActions({
  session,
  name,
  onRenamed,
}: {
  session: SessionRow;
  name: string;
  onRenamed: (t: string | null) => void;
}) {
  const { route } = useLocation();
  const [editing, setEditing] = useState(false);
  const [title, setTitle] = useState(session.title ?? "");
  const [confirmDelete, setConfirmDelete] = useState(false);
  const [error, setError] = useState<unknown>(null);
  return (
    <div class="actions">
      {editing ? (
        <form
          class="rename"
          onSubmit={async (e) => {
            e.preventDefault();
            try {
              const res = await api.rename(session.id, title.trim() === "" ? null : title);
              onRenamed(res.title);
              setEditing(false);
              setError(null);
            } catch (err) {
              setError(err);
            }
          }}
        >
          <label>
            New title
            <input value={title} maxLength={100} onInput={(e) => setTitle(e.currentTarget.value)} />
          </label>
          <button type="submit">Save title</button>
          <button type="button" onClick={() => setEditing(false)}>
            Cancel
          </button>
        </form>
      ) : (
        <button type="button" onClick={() => setEditing(true)}>
          Rename…
        </button>
      )}
      <button type="button" class="danger" onClick={() => setConfirmDelete(true)}>
        Delete…
      </button>
      <ConfirmDialog
        open={confirmDelete}
        title="Delete this session?"
        confirmLabel="Delete session"
        onCancel={() => setConfirmDelete(false)}
        onConfirm={async () => {
          try {
            await api.remove(session.id);
            route("/");
          } catch (err) {
            setError(err);
            setConfirmDelete(false);
          }
        }}
      >
        <p>
          “{name}” and its {countOf(session.message_count, "message")} are deleted. Sessions that continue it
          are kept.
        </p>
      </ConfirmDialog>
      <ErrorNote error={error} />
    </div>
  );
}

/** The stable id a link's `#m-<uid>` names, or `undefined`. */
function uidOfHash(): string | undefined {
  const m = /^#m-([0-9a-zA-Z_-]{1,64})$/.exec(window.location.hash);
  return m?.[1];
}

/**
 * The row of each uid that carries its anchor in the shown rows: the active one, else the last
 * (every copy of a logical message keeps its uid; the active one is its current version).
 */
function anchoredRows(rows: MessageRow[]): Set<number> {
  const chosen = new Map<string, MessageRow>();
  for (const m of rows) {
    if (!m.message_uid) continue;
    const prev = chosen.get(m.message_uid);
    if (prev === undefined || prev.view_state !== "active") chosen.set(m.message_uid, m);
  }
  return new Set([...chosen.values()].map((m) => m.id));
}

/**
 * The rows with, before each, whether it starts after a compaction point: the row after the
 * last of the rows a compaction summarized (`view_state: "compacted"`), where the summary and
 * the agent's context begin.
 */
function withCompactionPoints(rows: MessageRow[]): Array<{ m: MessageRow; point: boolean }> {
  return rows.map((m, i) => ({
    m,
    point: i > 0 && rows[i - 1]?.view_state === "compacted" && m.view_state !== "compacted",
  }));
}

function CompactionPoint({ summary }: { summary: boolean }) {
  return (
    <p class="compaction-point">
      Compaction point: the messages above were summarized{summary ? " into the summary below" : ""}; the
      agent's context starts here
    </p>
  );
}

/** One session: figures, lineage, export, and its messages a page at a time. */
export function ConversationPage() {
  const { params, query } = useRoute();
  const { url } = useLocation();
  const id = params.id ?? "";
  const [uid, setUid] = useState<string | undefined>(uidOfHash);
  const byRowId = query.message ? Number(query.message) : undefined;
  const [session, setSession] = useState<SessionRow | null>(null);
  const [lineage, setLineage] = useState<Lineage | null>(null);
  const [preview, setPreview] = useState("");
  /** The server answered 404 for the session: the page says so instead of an empty conversation. */
  const [missing, setMissing] = useState(false);
  const [win, setWin] = useState<Window>({ rows: [], before: 0, after: 0 });
  const [follow, setFollow] = useState(query.follow === "1");
  const [error, setError] = useState<unknown>(null);
  const [loading, setLoading] = useState(false);
  const bottom = useRef<HTMLDivElement>(null);

  const load = async (fn: () => Promise<void>) => {
    setLoading(true);
    try {
      await fn();
      setError(null);
    } catch (e) {
      setError(e);
    } finally {
      setLoading(false);
    }
  };

  const reset = (p: { from?: "start" | "end"; around?: number; uid?: string }) =>
    load(async () => {
      const page = await api.messages(id, { ...p, limit: PAGE });
      setWin({ rows: page.messages, before: page.before, after: page.after });
    });

  const show = (res: { session: SessionRow; lineage: Lineage; preview: string }) => {
    setSession(res.session);
    setLineage(res.lineage);
    setPreview(res.preview);
  };
  const unlessMissing = (e: unknown) => {
    if (e instanceof ApiError && e.status === 404) setMissing(true);
    else throw e;
  };

  // A link `#m-<uid>` (a permalink, a search hit) names the message by its stable id.
  useEffect(() => {
    const onHash = () => setUid(uidOfHash());
    onHash();
    window.addEventListener("hashchange", onHash);
    return () => window.removeEventListener("hashchange", onHash);
  }, [url]);
  const anchors = anchoredRows(win.rows);
  const byUid =
    uid === undefined ? undefined : win.rows.find((m) => m.message_uid === uid && anchors.has(m.id))?.id;
  const target = byRowId ?? byUid;

  useEffect(() => {
    setSession(null);
    setMissing(false);
    void load(() => api.session(id).then(show, unlessMissing));
    void reset(
      byRowId !== undefined
        ? { around: byRowId }
        : uid !== undefined
          ? { uid }
          : { from: follow ? "end" : "start" },
    );
  }, [id, byRowId, uid]);

  // Opened from a search hit: the hit is scrolled into view and focused.
  useEffect(() => {
    if (target === undefined) return;
    const el = document.getElementById(`m${target}`);
    if (el) {
      el.scrollIntoView({ block: "center" });
      el.focus({ preventScroll: true });
    }
  }, [win.rows, target]);

  const earlier = () =>
    load(async () => {
      const first = win.rows[0];
      if (!first) return;
      const page = await api.messages(id, { before: first.id, limit: PAGE });
      const rows = [...page.messages, ...win.rows];
      const drop = Math.max(0, rows.length - WINDOW);
      setWin({ rows: rows.slice(0, rows.length - drop), before: page.before, after: win.after + drop });
    });

  const later = async (scroll: boolean) => {
    const last = win.rows[win.rows.length - 1];
    const page = last
      ? await api.messages(id, { after: last.id, limit: PAGE })
      : await api.messages(id, { from: "start", limit: PAGE });
    if (page.messages.length === 0 && page.after === win.after) return;
    setWin((w) => {
      const rows = [...w.rows, ...page.messages];
      const drop = Math.max(0, rows.length - WINDOW);
      return { rows: rows.slice(drop), before: w.before + drop, after: page.after };
    });
    if (scroll) requestAnimationFrame(() => bottom.current?.scrollIntoView({ block: "end" }));
  };

  // Live: new messages of this session appear while the page shows its end; "Follow" keeps
  // the view at the bottom.
  useLiveChanges(() => {
    if (win.after === 0) void later(follow).catch(setError);
    void api.session(id).then(show, unlessMissing).catch(setError);
  });

  useEffect(() => {
    if (follow) {
      if (win.after > 0) void reset({ from: "end" });
      else bottom.current?.scrollIntoView({ block: "end" });
    }
  }, [follow]);

  const name = session ? sessionDisplayName({ title: session.title, preview }) : null;
  useDocumentTitle(missing ? "Session not found" : name);
  if (missing) {
    return (
      <NotFound heading="Session not found">
        No session has the id <code>{id}</code>: it may have been deleted, or the address is mistyped.
      </NotFound>
    );
  }

  const first = win.before + 1;
  const last = win.before + win.rows.length;
  const total = win.before + win.rows.length + win.after;
  return (
    <section aria-labelledby="session-heading" class="conversation">
      <ErrorNote error={error} />
      {session ? (
        <header class="session-head">
          <h1 id="session-heading">{name}</h1>
          <p class="dim">
            <span class="mono">{session.id}</span> <SessionMarks session={session} />
          </p>
          <Figures s={session} shown={loading && win.rows.length === 0 ? null : total} />
          <div class="actions">
            <a class="button" href={api.exportUrl(session.id, "jsonl")} download>
              Export JSONL
            </a>
            <a class="button" href={api.exportUrl(session.id, "markdown")} download>
              Export Markdown
            </a>
            <label class="toggle">
              <input type="checkbox" checked={follow} onChange={(e) => setFollow(e.currentTarget.checked)} />{" "}
              Follow
            </label>
          </div>
          {WRITABLE ? (
            <SessionActions
              session={session}
              name={name ?? ""}
              onRenamed={(t) => setSession({ ...session, title: t })}
            />
          ) : null}
          {lineage ? <LineageGraph lineage={lineage} /> : null}
        </header>
      ) : (
        <h1 id="session-heading">{loading ? "Loading…" : "Session"}</h1>
      )}
      <nav class="pager" aria-label="Messages">
        <button type="button" disabled={win.before === 0 || loading} onClick={() => reset({ from: "start" })}>
          First
        </button>
        <button type="button" disabled={win.before === 0 || loading} onClick={earlier}>
          Earlier ({formatNumber(win.before)})
        </button>
        <span class="dim" aria-live="polite">
          {total === 0
            ? "No messages"
            : `Messages ${formatNumber(first)}–${formatNumber(last)} of ${formatNumber(total)}`}
        </span>
      </nav>
      <div class="messages">
        {withCompactionPoints(win.rows).map(({ m, point }) => (
          <Fragment key={m.id}>
            {point ? <CompactionPoint summary={m.compressed_summary === true} /> : null}
            <MessageView message={m} highlighted={m.id === target} anchor={anchors.has(m.id)} />
          </Fragment>
        ))}
      </div>
      <nav class="pager" aria-label="More messages">
        <button type="button" disabled={win.after === 0 || loading} onClick={() => load(() => later(false))}>
          Later ({formatNumber(win.after)})
        </button>
        <button type="button" disabled={win.after === 0 || loading} onClick={() => reset({ from: "end" })}>
          Latest
        </button>
      </nav>
      <div ref={bottom} />
    </section>
  );
}
