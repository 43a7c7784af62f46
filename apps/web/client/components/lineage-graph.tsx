import type { Lineage, LineageNode } from "../api.js";
import { countOf } from "../format.js";

const LINK_LABEL: Record<string, string> = {
  compression: "continued after compression",
  branch: "branch",
  delegate: "sub-agent",
  other: "continuation",
};

function Node({ node, current }: { node: LineageNode; current: boolean }) {
  const label = node.title ?? node.id;
  return (
    <div class={`lineage-node${current ? " current" : ""} link-${node.link ?? "root"}`}>
      {current ? (
        <span aria-current="page">{label}</span>
      ) : (
        <a href={`/session/${encodeURIComponent(node.id)}`}>{label}</a>
      )}
      <span class="dim">
        {node.link ? `${LINK_LABEL[node.link] ?? node.link} · ` : ""}
        {node.source} · {countOf(node.message_count, "message")}
      </span>
    </div>
  );
}

/**
 * The lineage as a tree: the chain of ancestors down to this session, then everything that
 * continues or branches from it, each node a link.
 */
export function LineageGraph({ lineage }: { lineage: Lineage }) {
  const { ancestors, session, descendants } = lineage;
  if (ancestors.length === 0 && descendants.length === 0) return null;
  const children = new Map<string, LineageNode[]>();
  for (const d of descendants) {
    const list = children.get(d.parent_session_id ?? "") ?? [];
    list.push(d);
    children.set(d.parent_session_id ?? "", list);
  }
  const subtree = (node: LineageNode): preact.JSX.Element => (
    <li key={node.id}>
      <Node node={node} current={node.id === session.id} />
      {(children.get(node.id) ?? []).length > 0 ? (
        <ul>{(children.get(node.id) ?? []).map(subtree)}</ul>
      ) : null}
    </li>
  );
  // Ancestors form a path down to the session, whose subtree hangs below it.
  let tree = subtree(session);
  for (const a of [...ancestors].reverse()) {
    tree = (
      <li key={a.id}>
        <Node node={a} current={false} />
        <ul>{tree}</ul>
      </li>
    );
  }
  return (
    <nav class="lineage" aria-label="Lineage">
      <h2>Lineage</h2>
      <ul class="lineage-tree">{tree}</ul>
    </nav>
  );
}
