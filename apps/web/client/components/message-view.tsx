import type { MessageRow } from "../api.js";
import { formatNumber, formatTime, isoTime } from "../format.js";
import { Code, Markdown } from "./markdown.js";

interface ToolCall {
  id?: string;
  function?: { name?: string; arguments?: unknown };
  name?: string;
  arguments?: unknown;
}

/** Longer text is shown plain: highlighting a megabyte of tool output would stall the page. */
const HIGHLIGHT_LIMIT = 20_000;

/** Pretty JSON when the text is JSON, else the text itself, with a language for highlighting. */
function pretty(value: unknown): { code: string; language: string } {
  if (typeof value !== "string") return { code: JSON.stringify(value, null, 2) ?? "", language: "json" };
  const trimmed = value.trim();
  if ((trimmed.startsWith("{") || trimmed.startsWith("[")) && trimmed.length <= HIGHLIGHT_LIMIT) {
    try {
      return { code: JSON.stringify(JSON.parse(trimmed), null, 2), language: "json" };
    } catch {
      // Not JSON after all: shown as it is.
    }
  }
  return { code: value, language: "" };
}

function CodeBlock({ value }: { value: unknown }) {
  const { code, language } = pretty(value);
  if (code.length > HIGHLIGHT_LIMIT) return <pre class="code">{code}</pre>;
  return <Code code={code} language={language} />;
}

function toolCallsOf(message: MessageRow): ToolCall[] {
  const calls = message.tool_calls;
  if (Array.isArray(calls)) return calls as ToolCall[];
  return calls && typeof calls === "object" ? [calls as ToolCall] : [];
}

function argumentsPreview(args: unknown): string {
  const text = typeof args === "string" ? args : JSON.stringify(args ?? "");
  return text.length > 80 ? `${text.slice(0, 80)}…` : text;
}

/**
 * The link to a message: by its stable id where the file has one (`/session/<id>#m-<uid>`,
 * which keeps pointing at the message through compactions and exports), else by row id.
 */
export function messageLink(
  sessionId: string,
  m: { id: number; message_uid?: string | null | undefined },
): string {
  const session = `/session/${encodeURIComponent(sessionId)}`;
  return m.message_uid ? `${session}#m-${m.message_uid}` : `${session}?message=${m.id}`;
}

/** Where a row stands in the agent's view, as a badge (`null`: an active row, or a v11 file). */
function viewStateBadge(m: MessageRow): { label: string; title: string } | null {
  if (m.compressed_summary === true) {
    return { label: "compaction summary", title: "The summary a compaction wrote of the messages before it" };
  }
  if (m.view_state === "compacted") {
    return {
      label: "summarized",
      title: "Summarized by a compaction: shown, no longer in the agent's context",
    };
  }
  if (m.view_state === "superseded") {
    return { label: "superseded", title: "Rewound or replaced by a later copy: not in the agent's context" };
  }
  return null;
}

/**
 * One message: Markdown content; tool calls, tool results and reasoning folded. `anchor`: this
 * row carries the `m-<uid>` anchor of its stable id (one row per uid in a page: the current one).
 */
export function MessageView({
  message,
  highlighted,
  anchor,
}: {
  message: MessageRow;
  highlighted?: boolean;
  anchor?: boolean;
}) {
  const calls = toolCallsOf(message);
  const reasoning = message.reasoning ?? message.reasoning_content;
  const role = message.role;
  const state = viewStateBadge(message);
  return (
    <article
      class={`message role-${role.replace(/[^a-z_-]/gi, "")}${highlighted ? " hit" : ""}${message.view_state && message.view_state !== "active" ? ` view-${message.view_state}` : ""}`}
      id={`m${message.id}`}
      aria-label={`${role} message`}
      tabIndex={-1}
    >
      {anchor && message.message_uid ? <span class="anchor" id={`m-${message.message_uid}`} /> : null}
      <header class="message-head">
        <span class="role">{role}</span>
        {state ? (
          <span class="badge view-state" title={state.title}>
            {state.label}
          </span>
        ) : null}
        {message.tool_name ? <span class="tool-name">{message.tool_name}</span> : null}
        <time dateTime={isoTime(message.timestamp)}>{formatTime(message.timestamp)}</time>
        {message.token_count ? <span class="dim">{formatNumber(message.token_count)} tokens</span> : null}
        {message.finish_reason ? <span class="dim">{message.finish_reason}</span> : null}
        <a class="permalink dim" href={messageLink(message.session_id, message)} title="Link to this message">
          #
        </a>
      </header>
      {reasoning ? (
        <details class="fold reasoning">
          <summary>Reasoning</summary>
          <Markdown text={reasoning} />
        </details>
      ) : null}
      {role === "tool" ? (
        <details class="fold tool-result">
          <summary>
            Result of {message.tool_name ?? "a tool"}
            <span class="dim"> · {formatNumber((message.content ?? "").length)} characters</span>
          </summary>
          <CodeBlock value={message.content ?? ""} />
        </details>
      ) : message.content ? (
        <Markdown text={message.content} />
      ) : null}
      {calls.map((call, i) => {
        const name = call.function?.name ?? call.name ?? "tool";
        const args = call.function?.arguments ?? call.arguments;
        return (
          <details class="fold tool-call" key={call.id ?? i}>
            <summary>
              Tool call <code>{name}</code>
              <span class="dim"> {argumentsPreview(args)}</span>
            </summary>
            <CodeBlock value={args ?? ""} />
          </details>
        );
      })}
    </article>
  );
}
