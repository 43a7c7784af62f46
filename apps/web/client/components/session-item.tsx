import { sessionDisplayName } from "@hermes/core";
import { useState } from "preact/hooks";
import { api, type LineageNode, type ListedSession } from "../api.js";
import { ago, countOf, formatTime, isoTime, LIVE_WINDOW_SECONDS } from "../format.js";
import { SessionMarks } from "./session-marks.js";

const LINK_LABEL: Record<string, string> = {
  compression: "compressed into",
  branch: "branch",
  delegate: "sub-agent",
  other: "continued in",
};

/** "live": not ended and active in the last minutes; "open": not ended; else nothing. */
export function liveState(row: ListedSession, now = Date.now() / 1000): "live" | "open" | null {
  if (!row.chain_open) return null;
  return now - row.chain_last_active <= LIVE_WINDOW_SECONDS ? "live" : "open";
}

/** One session of a list, with its chain (compression continuations, sub-agents) unfoldable below it. */
export function SessionItem({ row }: { row: ListedSession }) {
  const [chain, setChain] = useState<LineageNode[] | null>(null);
  const [open, setOpen] = useState(false);
  const state = liveState(row);
  // A row stands for its chain and is named after its first session, this one.
  const label = sessionDisplayName(row);
  const toggle = async () => {
    if (!open && chain === null) {
      const { lineage } = await api.session(row.id);
      setChain(lineage.descendants.filter((d) => d.link !== "branch"));
    }
    setOpen(!open);
  };
  return (
    <li class="session-item">
      <div class="session-main">
        <a class="row-link" href={`/session/${encodeURIComponent(row.id)}`}>
          {label}
        </a>
        {state ? <span class={`badge ${state}`}>{state}</span> : null}
        <SessionMarks session={row} />
      </div>
      <div class="session-meta dim">
        <span>{row.source}</span>
        {row.model ? <span>{row.model}</span> : null}
        <span>{countOf(row.message_count, "message")}</span>
        <time dateTime={isoTime(row.chain_last_active)} title={formatTime(row.chain_last_active)}>
          {ago(row.chain_last_active)}
        </time>
        {row.title && row.preview ? <span class="preview">{row.preview}</span> : null}
      </div>
      {row.chain_sessions > 0 ? (
        <div class="chain">
          <button type="button" class="link-button" aria-expanded={open} onClick={toggle}>
            {open ? "▾" : "▸"} {row.chain_sessions} more in this chain
          </button>
          {open && chain ? (
            <ul class="chain-list">
              {chain.map((node) => (
                <li key={node.id} style={{ marginLeft: `${(node.depth - 1) * 1.25}rem` }}>
                  <span class="dim">{LINK_LABEL[node.link ?? "other"] ?? node.link} </span>
                  <a class="row-link" href={`/session/${encodeURIComponent(node.id)}`}>
                    {node.title ?? node.id}
                  </a>
                  <span class="dim">
                    {" "}
                    · {countOf(node.message_count, "message")} ·{" "}
                    {node.ended_at === null ? "not ended" : formatTime(node.ended_at)}
                  </span>
                </li>
              ))}
            </ul>
          ) : null}
        </div>
      ) : null}
    </li>
  );
}

/** Arrow keys move between the links of a list (Tab still walks every control). */
export function onListKeys(event: KeyboardEvent): void {
  if (event.key !== "ArrowDown" && event.key !== "ArrowUp") return;
  const list = event.currentTarget as HTMLElement;
  const links = [...list.querySelectorAll<HTMLAnchorElement>("a.row-link")];
  const at = links.indexOf(document.activeElement as HTMLAnchorElement);
  const next = links[event.key === "ArrowDown" ? Math.min(links.length - 1, at + 1) : Math.max(0, at - 1)];
  if (next) {
    event.preventDefault();
    next.focus();
  }
}
