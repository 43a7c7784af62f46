import type { SessionRow, MessageRow as StoredMessageRow } from "@hermes/schema";
import type { MessageRow } from "../types.js";

/** A session with its messages as any export gives it (`tool_calls` as JSON text or parsed). */
export type RenderableSession = SessionRow & { messages: ReadonlyArray<StoredMessageRow | MessageRow> };

const iso = (t: number | null) =>
  t === null || !Number.isFinite(t) ? "—" : new Date(t * 1000).toISOString();

/** A fence longer than any run of backticks inside `text`, so the content cannot close it. */
function fence(text: string, lang = ""): string {
  let longest = 2;
  for (const m of text.matchAll(/`+/g)) longest = Math.max(longest, m[0].length);
  const f = "`".repeat(longest + 1);
  return `${f}${lang}\n${text}\n${f}`;
}

/** Markdown-escapes a one-line value for a table cell. */
const cell = (v: unknown) =>
  String(v ?? "—")
    .replace(/\|/g, "\\|")
    .replace(/\r?\n/g, " ");

function parsedToolCalls(value: unknown): unknown[] {
  let v = value;
  if (typeof v === "string") {
    try {
      v = JSON.parse(v);
    } catch {
      return [v];
    }
  }
  if (v === null || v === undefined) return [];
  return Array.isArray(v) ? v : [v];
}

function renderToolCall(call: unknown): string {
  if (typeof call !== "object" || call === null) return fence(String(call));
  const c = call as Record<string, unknown>;
  const fn = (typeof c.function === "object" && c.function !== null ? c.function : c) as Record<
    string,
    unknown
  >;
  const name = typeof fn.name === "string" ? fn.name : "tool";
  let args: unknown = fn.arguments ?? c.input ?? {};
  if (typeof args === "string") {
    try {
      args = JSON.parse(args);
    } catch {
      // Shown as written.
    }
  }
  const body = typeof args === "string" ? args : JSON.stringify(args, null, 2);
  const id = typeof c.id === "string" ? ` \`${c.id}\`` : "";
  return `**Tool call** \`${name}\`${id}\n\n${fence(body, typeof args === "string" ? "" : "json")}`;
}

const ROLE_HEADINGS: Record<string, string> = {
  user: "User",
  assistant: "Assistant",
  system: "System",
  tool: "Tool result",
};

/**
 * A readable Markdown document of a session: a heading with its title, a table of its metadata
 * (source, model, times, tokens, cost, parent), then each message under a heading with its
 * role and time; tool calls and tool results in code fences (longer fences than any backtick run
 * inside, so content cannot break out), reasoning in a collapsed `<details>` block.
 *
 * @example
 * const s = await store.exportSession(id); if (s) writeFileSync("session.md", sessionToMarkdown(s))
 */
export function sessionToMarkdown(session: RenderableSession): string {
  const out: string[] = [];
  out.push(`# ${session.title ?? `Session ${session.id}`}`, "");
  const rows: Array<[string, unknown]> = [
    ["Session", `\`${session.id}\``],
    ["Source", session.source],
    ["Model", session.model],
    ["Started", iso(session.started_at)],
    [
      "Ended",
      session.ended_at === null
        ? "—"
        : `${iso(session.ended_at)}${session.end_reason ? ` (${session.end_reason})` : ""}`,
    ],
    ["Parent", session.parent_session_id === null ? null : `\`${session.parent_session_id}\``],
    ["Messages", session.message_count],
    ["Tool calls", session.tool_call_count],
    [
      "Tokens",
      `${session.input_tokens ?? 0} in · ${session.output_tokens ?? 0} out · ${session.cache_read_tokens ?? 0} cache read · ${session.cache_write_tokens ?? 0} cache write · ${session.reasoning_tokens ?? 0} reasoning`,
    ],
    ["Cost (USD)", session.actual_cost_usd ?? session.estimated_cost_usd ?? null],
  ];
  out.push("| | |", "|---|---|");
  for (const [k, v] of rows) if (v !== null && v !== undefined) out.push(`| ${k} | ${cell(v)} |`);
  out.push("");
  if (session.system_prompt) {
    out.push(
      "<details><summary>System prompt</summary>",
      "",
      fence(session.system_prompt),
      "",
      "</details>",
      "",
    );
  }
  for (const m of session.messages) {
    const heading = ROLE_HEADINGS[m.role] ?? m.role;
    const tool = m.role === "tool" && m.tool_name ? ` · \`${m.tool_name}\`` : "";
    out.push(`## ${heading}${tool} · ${iso(m.timestamp)}`, "");
    const reasoning = m.reasoning ?? m.reasoning_content;
    if (reasoning) {
      out.push("<details><summary>Reasoning</summary>", "", fence(reasoning), "", "</details>", "");
    }
    if (m.content !== null && m.content !== "") {
      out.push(m.role === "tool" ? fence(m.content) : m.content, "");
    }
    for (const call of parsedToolCalls(m.tool_calls)) out.push(renderToolCall(call), "");
  }
  return `${out.join("\n").trimEnd()}\n`;
}
