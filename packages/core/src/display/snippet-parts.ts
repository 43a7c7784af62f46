/** A piece of a search snippet: plain text, or a match to highlight. */
export interface SnippetPart {
  text: string;
  match: boolean;
}

/** The words of a query as a user typed them, without FTS5 operators, quotes and `*`. */
function highlightTerms(query: string): string[] {
  return query
    .replace(/["()^{}+]/g, " ")
    .split(/\s+/)
    .map((t) => t.replace(/^\*+|\*+$/g, ""))
    .filter((t) => t.length > 0 && !/^(AND|OR|NOT|NEAR)$/.test(t));
}

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/**
 * A search snippet cut into plain text and matches, for a reader to highlight (the CLI's
 * colours, the web's `<mark>`): FTS5 snippets carry `>>>…<<<` markers; substring (CJK)
 * snippets carry none, so the query's terms are found in them, longest first, in any case.
 * Empty pieces are left out.
 *
 * @example snippetParts("run >>>docker<<< build", "docker")
 * // [{ text: "run ", match: false }, { text: "docker", match: true }, { text: " build", match: false }]
 */
export function snippetParts(snippet: string, query: string): SnippetPart[] {
  const parts: SnippetPart[] = [];
  const push = (text: string, match: boolean) => {
    if (text !== "") parts.push({ text, match });
  };
  if (snippet.includes(">>>")) {
    const marked = />>>([\s\S]*?)<<</g;
    let last = 0;
    for (let m = marked.exec(snippet); m !== null; m = marked.exec(snippet)) {
      push(snippet.slice(last, m.index), false);
      push(m[1] ?? "", true);
      last = m.index + m[0].length;
    }
    push(snippet.slice(last), false);
    return parts;
  }
  const terms = highlightTerms(query).sort((a, b) => b.length - a.length);
  if (terms.length === 0) {
    push(snippet, false);
    return parts;
  }
  const pieces = snippet.split(new RegExp(`(${terms.map(escapeRegExp).join("|")})`, "giu"));
  pieces.forEach((piece, i) => {
    push(piece, i % 2 === 1);
  });
  return parts;
}
