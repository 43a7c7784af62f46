import { sessionDisplayName, toolCallsOf } from "@hermes/core";
import type { MessageRow, SessionRow } from "@hermes/store";
import { formatClock, formatCost, formatCount, formatTime } from "./format-time.js";
import { countOf, wordFor } from "./plural.js";
import { sessionMarks } from "./session-marks.js";
import type { TerminalStyle } from "./terminal-style.js";

/** Options of {@link renderMessage} and {@link renderConversationHeader}. */
export interface RenderConversationOptions {
  style: TerminalStyle;
  /** Show reasoning in full instead of one folded line. */
  reasoning?: boolean;
  /** Lines of a tool result shown before it is cut (default 12; 0 = all). */
  toolLines?: number;
  /** The session's ancestors and descendants, when the store can tell. */
  lineage?: LineageView | null;
  /** The start of its first user message (`sessionPreview`): the name of an untitled session. */
  preview?: string;
}

/** Ancestors (root first) and descendants of a session, with the kind of each link. */
export interface LineageView {
  /** The kind of this session's link to its parent (`compression`, `branch`, `delegate`, …). */
  selfLink: string | null;
  /** Root first; each `link` is that session's link to its own parent. */
  ancestors: Array<{ id: string; title: string | null; link: string | null }>;
  descendants: Array<{ id: string; title: string | null; link: string | null; depth: number }>;
}

function renderLineage(lineage: LineageView, style: TerminalStyle): string[] {
  const name = (n: { id: string; title: string | null }) => (n.title ? `${n.id} '${n.title}'` : n.id);
  const lines: string[] = [];
  const [root, ...rest] = lineage.ancestors;
  if (root !== undefined) {
    let text = name(root);
    for (const a of rest) text += ` ─${a.link ?? "child"}→ ${name(a)}`;
    text += ` ─${lineage.selfLink ?? "child"}→ this`;
    lines.push(style.dim(`lineage ${text}`));
  }
  const children = lineage.descendants.filter((d) => d.depth === 1);
  if (children.length > 0) {
    const shown = children.slice(0, 5).map((c) => `${name(c)} (${c.link ?? "child"})`);
    const more = children.length > 5 ? `, +${children.length - 5} more` : "";
    lines.push(style.dim(`children ${shown.join(", ")}${more}`));
  }
  return lines;
}

const indent = (text: string, prefix = "  ") =>
  text
    .split("\n")
    .map((l) => prefix + l)
    .join("\n");

function cutLines(text: string, max: number, style: TerminalStyle): string {
  const lines = text.split("\n");
  if (max <= 0 || lines.length <= max) return text;
  return `${lines.slice(0, max).join("\n")}\n${style.dim(`… ${lines.length - max} more ${wordFor(lines.length - max, "line")} (--full to show all)`)}`;
}

/**
 * The message count of a header. A newer agent's file counts the rows in its context
 * (`message_count`: active rows only), while a conversation also shows the rows a compaction
 * summarized: when `shown` differs, both, each named (`3 messages in the agent's context, 91
 * shown`).
 */
function messageCountText(s: SessionRow, shown: number | undefined): string {
  const counted = s.message_count ?? 0;
  if (shown === undefined || shown === counted || !("archived" in s)) return countOf(counted, "message");
  return `${countOf(counted, "message")} in the agent's context, ${formatCount(shown)} shown`;
}

/**
 * The header block of a session: its name (`sessionDisplayName`: the title, else the preview
 * given, else "(untitled)"), marks (pinned, archived, hidden) and id, source, model, times,
 * counters, cost. `shown`: how many messages the conversation displays.
 */
export function renderSessionHeader(
  s: SessionRow,
  style: TerminalStyle,
  preview = "",
  shown?: number,
): string {
  const marks = sessionMarks(s).map((m) => style.yellow(`[${m}]`));
  const name = style.bold(sessionDisplayName({ title: s.title, preview }));
  const lines = [[name, ...marks, style.dim(s.id)].join("  ")];
  const facts = [
    `source ${s.source}`,
    s.model ? `model ${s.model}` : null,
    `started ${formatTime(s.started_at)}`,
    s.ended_at ? `ended ${formatTime(s.ended_at)}${s.end_reason ? ` (${s.end_reason})` : ""}` : "active",
  ].filter((x): x is string => x !== null);
  lines.push(style.dim(facts.join(" · ")));
  const tokens = (s.input_tokens ?? 0) + (s.output_tokens ?? 0);
  const counts = [
    messageCountText(s, shown),
    countOf(s.tool_call_count ?? 0, "tool call"),
    tokens > 0 ? `${formatCount(s.input_tokens)} in / ${formatCount(s.output_tokens)} out tokens` : null,
    formatCost(s.actual_cost_usd ?? s.estimated_cost_usd) || null,
  ].filter((x): x is string => x !== null);
  lines.push(style.dim(counts.join(" · ")));
  return lines.join("\n");
}

const ROLE_COLOR: Record<string, keyof TerminalStyle> = {
  user: "green",
  assistant: "cyan",
  tool: "yellow",
  system: "magenta",
};

/**
 * The header of `show`: the session's facts, then its lineage (or its parent). `shown`: how
 * many messages the conversation displays (the header names both counts when they differ).
 */
export function renderConversationHeader(
  s: SessionRow,
  o: RenderConversationOptions,
  shown?: number,
): string {
  const out = [renderSessionHeader(s, o.style, o.preview, shown)];
  if (o.lineage) out.push(...renderLineage(o.lineage, o.style));
  else if (s.parent_session_id) out.push(o.style.dim(`parent ${s.parent_session_id}`));
  return `${out.join("\n")}\n\n`;
}

/**
 * One message for a terminal: a rule with role and time, tool calls as `→ name(args)`, tool
 * results indented under their tool (cut after `toolLines`), reasoning folded to one line.
 */
export function renderMessage(m: MessageRow, o: RenderConversationOptions): string {
  const { style } = o;
  const key = ROLE_COLOR[m.role];
  const color = key === undefined ? style.bold : (style[key] as (t: string) => string);
  let label = m.role;
  if (m.role === "tool")
    label = `tool ${m.tool_name ?? ""}`.trim() + (m.tool_call_id ? ` [${m.tool_call_id}]` : "");
  const state = viewStateLabel(m);
  const out = [
    `${color(style.bold(`── ${label}`))} ${style.dim(`#${m.id} ${formatClock(m.timestamp)}`)}${state ? ` ${style.yellow(`· ${state}`)}` : ""}`,
  ];
  const reasoning = m.reasoning ?? m.reasoning_content;
  if (reasoning) {
    if (o.reasoning) {
      out.push(style.dim(style.italic(indent(reasoning, "  │ "))));
    } else {
      const words = reasoning.trim().split(/\s+/).length;
      out.push(style.dim(`  ▸ reasoning (${countOf(words, "word")}, folded; --reasoning to expand)`));
    }
  }
  if (m.content !== null && m.content !== "") {
    const body = m.role === "tool" ? cutLines(m.content, o.toolLines ?? 12, style) : m.content;
    out.push(m.role === "tool" ? indent(body) : body);
  }
  for (const call of toolCallsOf(m.tool_calls)) {
    out.push(
      `  ${style.yellow("→")} ${style.bold(call.name)}(${call.arguments})${call.id ? style.dim(` [${call.id}]`) : ""}`,
    );
  }
  return `${out.join("\n")}\n\n`;
}

/** Where a row stands in the agent's view, as a label; `null` for an active row (or a v11 file). */
function viewStateLabel(m: MessageRow): string | null {
  if (m.compressed_summary === true) return "compaction summary";
  if (m.view_state === "compacted") return "summarized";
  if (m.view_state === "superseded") return "superseded (rewound or replaced; not in the agent's context)";
  return null;
}

/**
 * Marks, between the rows of a conversation, where the agent's context changes: after the
 * rows a compaction summarized (`view_state: "compacted"`, still displayed) comes the
 * compaction point, where the summary and the rows the agent still sees begin. Returns a
 * function called with each row in display order; it gives the line to print before it, or "".
 */
export function compactionMarks(style: TerminalStyle): (m: MessageRow) => string {
  let summarized = 0;
  return (m) => {
    if (m.view_state === "compacted") {
      summarized++;
      return "";
    }
    if (summarized === 0) return "";
    const n = summarized;
    summarized = 0;
    const what = m.compressed_summary === true ? "into the summary below" : "by a compaction";
    return `${style.yellow(style.bold(`━━ compaction point: the ${countOf(n, "message")} above were summarized ${what}; the agent's context starts here ━━`))}\n\n`;
  };
}
