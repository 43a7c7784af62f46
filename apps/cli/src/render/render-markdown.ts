import { formatCost, formatTime } from "./format-time.js";
import type { SessionWithMessages } from "./session-view.js";
import { toolCallsOf } from "./tool-calls.js";

/** A fence longer than any backtick run inside `text`, so code blocks never end early. */
function fence(text: string): string {
  const longest = Math.max(2, ...[...text.matchAll(/`+/g)].map((m) => m[0].length));
  return "`".repeat(longest + 1);
}

function codeBlock(text: string, lang = ""): string {
  const f = fence(text);
  return `${f}${lang}\n${text}\n${f}`;
}

/**
 * Renders a session as Markdown: a title, a facts list, then one section per message; tool
 * calls and results as code blocks, reasoning in a `<details>` block.
 */
export function renderMarkdown(s: SessionWithMessages): string {
  const out: string[] = [`# ${s.title ?? `Session ${s.id}`}`, ""];
  out.push(`- **id**: \`${s.id}\``);
  out.push(`- **source**: ${s.source}`);
  if (s.model) out.push(`- **model**: ${s.model}`);
  out.push(`- **started**: ${formatTime(s.started_at)}`);
  if (s.ended_at)
    out.push(`- **ended**: ${formatTime(s.ended_at)}${s.end_reason ? ` (${s.end_reason})` : ""}`);
  if (s.parent_session_id) out.push(`- **parent**: \`${s.parent_session_id}\``);
  out.push(`- **messages**: ${s.message_count ?? s.messages.length}, tool calls: ${s.tool_call_count ?? 0}`);
  const cost = formatCost(s.actual_cost_usd ?? s.estimated_cost_usd);
  if (cost) out.push(`- **cost**: ${cost}`);
  out.push("");
  for (const m of s.messages) {
    const heading =
      m.role === "tool" ? `### tool${m.tool_name ? ` \`${m.tool_name}\`` : ""}` : `### ${m.role}`;
    out.push(`${heading} · ${formatTime(m.timestamp)}`, "");
    const reasoning = m.reasoning ?? m.reasoning_content;
    if (reasoning) out.push("<details><summary>reasoning</summary>", "", reasoning, "", "</details>", "");
    if (m.content !== null && m.content !== "") {
      out.push(m.role === "tool" ? codeBlock(m.content) : m.content, "");
    }
    for (const call of toolCallsOf(m.tool_calls)) {
      out.push(
        `**→ ${call.name}**${call.id ? ` (\`${call.id}\`)` : ""}`,
        "",
        codeBlock(call.arguments, "json"),
        "",
      );
    }
  }
  return out.join("\n");
}
