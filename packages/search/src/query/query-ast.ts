/**
 * The parsed form of a search query: terms combined with FTS5's boolean operators.
 *
 * The shape mirrors how FTS5 itself groups a query, so a tree rendered back to FTS5 syntax
 * means what FTS5 would have read in the original text: adjacent terms bind tightest
 * (implicit AND), then `NOT`, then `AND`, then `OR`.
 */
export type QueryNode = QueryTerm | QueryAnd | QueryOr | QueryNot;

/** One search term: a word or a quoted phrase as the user typed it (without the quotes). */
export interface QueryTerm {
  readonly kind: "term";
  /** The text of the term; tokenized by the index that serves it. */
  readonly text: string;
  /** Followed by `*`: every indexed word that starts with the term. */
  readonly prefix: boolean;
}

/** All children must match. */
export interface QueryAnd {
  readonly kind: "and";
  readonly children: readonly QueryNode[];
}

/** Any child may match. */
export interface QueryOr {
  readonly kind: "or";
  readonly children: readonly QueryNode[];
}

/** `positive` must match and none of `negative` (FTS5's binary `NOT`). */
export interface QueryNot {
  readonly kind: "not";
  readonly positive: QueryNode;
  readonly negative: readonly QueryNode[];
}

/** The three boolean operators of FTS5. */
export type QueryOperator = "AND" | "OR" | "NOT";

/** A lexed query: terms and operators in the order typed. */
export type QueryToken = { readonly kind: "op"; readonly op: QueryOperator } | QueryTerm;

/** Every term of a tree, left to right. */
export function queryTerms(node: QueryNode): QueryTerm[] {
  switch (node.kind) {
    case "term":
      return [node];
    case "and":
    case "or":
      return node.children.flatMap(queryTerms);
    case "not":
      return [...queryTerms(node.positive), ...node.negative.flatMap(queryTerms)];
  }
}

/** The terms a hit must contain somewhere (the positive side of every `NOT`). */
export function positiveTerms(node: QueryNode): QueryTerm[] {
  switch (node.kind) {
    case "term":
      return [node];
    case "and":
    case "or":
      return node.children.flatMap(positiveTerms);
    case "not":
      return positiveTerms(node.positive);
  }
}

/**
 * Makes an operator/term sequence well-formed, keeping what every `NOT` excludes excluded.
 *
 * - A run of operators between two terms collapses to one: `OR` if the run has one, else `NOT`,
 *   else `AND` (`a AND OR b` → `a OR b`, `a AND NOT b` → `a NOT b`). Operators at the end go.
 * - A `NOT` where a term is expected (at the start, or after `OR`) negates the next term; an
 *   even number of them cancel out. FTS5 only has `x NOT y`, so the negated term moves after
 *   the terms it is joined to: `NOT docker deploy` → `deploy NOT docker`.
 *
 * Returns `null` when a negation has nothing to be subtracted from (`NOT docker`,
 * `deploy OR NOT docker`): no FTS5 query means that, and dropping the `NOT` would return
 * exactly what was excluded.
 */
export function repairOperators(tokens: readonly QueryToken[]): QueryToken[] | null {
  // First pass: binary operators collapsed; negations at the start of a branch marked.
  type Item = QueryToken | { readonly kind: "negate" };
  const items: Item[] = [];
  let run: QueryOperator[] = [];
  for (const token of tokens) {
    if (token.kind === "op") {
      run.push(token.op);
      continue;
    }
    const afterOr = run.lastIndexOf("OR");
    let unary = run;
    if (items.length > 0 && run.length > 0) {
      if (afterOr >= 0) {
        items.push({ kind: "op", op: "OR" });
        unary = run.slice(afterOr + 1);
      } else {
        items.push({ kind: "op", op: run.includes("NOT") ? "NOT" : "AND" });
        unary = [];
      }
    }
    if (unary.filter((op) => op === "NOT").length % 2 === 1) items.push({ kind: "negate" });
    items.push(token);
    run = [];
  }
  // Second pass, branch by branch (OR binds loosest): `NOT t rest` becomes `rest₀ NOT t rest₁`,
  // where rest₀ is the run of terms that `rest` starts with.
  const out: QueryToken[] = [];
  let branch: Item[] = [];
  const endBranch = (): boolean => {
    if (branch[0]?.kind === "negate") {
      const negated = branch[1] as QueryTerm;
      const rest = branch.slice(2);
      if (rest[0]?.kind === "op" && rest[0].op === "AND") rest.shift();
      const lead = rest.findIndex((t) => t.kind !== "term");
      const cut = lead === -1 ? rest.length : lead;
      if (cut === 0) return false;
      branch = [...rest.slice(0, cut), { kind: "op", op: "NOT" }, negated, ...rest.slice(cut)];
    }
    out.push(...(branch as QueryToken[]));
    branch = [];
    return true;
  };
  for (const item of items) {
    if (item.kind === "op" && item.op === "OR") {
      if (!endBranch()) return null;
      out.push(item);
    } else branch.push(item);
  }
  return endBranch() ? out : null;
}

/**
 * Parses a token sequence with FTS5's precedence, after {@link repairOperators}: a run of
 * adjacent terms is one implicit AND, then `NOT` (left-associative, so `a NOT b NOT c` is
 * `a NOT (b OR c)`), then `AND`, then `OR`. Returns `null` for an empty sequence and for a
 * negation with nothing to subtract it from (see {@link repairOperators}).
 */
export function parseQueryTokens(tokens: readonly QueryToken[]): QueryNode | null {
  const seq = repairOperators(tokens);
  if (seq === null || seq.length === 0) return null;
  let i = 0;
  const peekOp = (op: QueryOperator) => {
    const t = seq[i];
    return t !== undefined && t.kind === "op" && t.op === op;
  };
  const list = (): QueryNode => {
    const terms: QueryTerm[] = [];
    for (let t = seq[i]; t !== undefined && t.kind === "term"; t = seq[i]) {
      terms.push(t);
      i++;
    }
    return terms.length === 1 ? (terms[0] as QueryTerm) : { kind: "and", children: terms };
  };
  const not = (): QueryNode => {
    const positive = list();
    const negative: QueryNode[] = [];
    while (peekOp("NOT")) {
      i++;
      negative.push(list());
    }
    return negative.length === 0 ? positive : { kind: "not", positive, negative };
  };
  const and = (): QueryNode => {
    const children = [not()];
    while (peekOp("AND")) {
      i++;
      children.push(not());
    }
    return children.length === 1
      ? (children[0] as QueryNode)
      : { kind: "and", children: flatten("and", children) };
  };
  const or = (): QueryNode => {
    const children = [and()];
    while (peekOp("OR")) {
      i++;
      children.push(and());
    }
    return children.length === 1
      ? (children[0] as QueryNode)
      : { kind: "or", children: flatten("or", children) };
  };
  return or();
}

function flatten(kind: "and" | "or", children: QueryNode[]): QueryNode[] {
  return children.flatMap((c) => (c.kind === kind ? c.children : [c]));
}

/**
 * Renders a tree as an FTS5 expression, each term rendered by `term`. Groups are
 * parenthesized, so the nesting depth stays that of the tree (a handful of levels), far
 * below FTS5's limit of 256, whatever the user typed.
 */
export function renderFts5(node: QueryNode, term: (t: QueryTerm) => string): string {
  const group = (n: QueryNode) => (n.kind === "term" ? term(n) : `(${renderFts5(n, term)})`);
  switch (node.kind) {
    case "term":
      return term(node);
    case "and": {
      // Adjacent terms are FTS5's implicit AND; groups need the explicit operator.
      const parts: string[] = [];
      let run: string[] = [];
      for (const child of node.children) {
        if (child.kind === "term") run.push(term(child));
        else {
          if (run.length > 0) parts.push(run.join(" "));
          run = [];
          parts.push(group(child));
        }
      }
      if (run.length > 0) parts.push(run.join(" "));
      return parts.join(" AND ");
    }
    case "or":
      return node.children.map(group).join(" OR ");
    case "not": {
      const neg =
        node.negative.length === 1
          ? group(node.negative[0] as QueryNode)
          : `(${node.negative.map(group).join(" OR ")})`;
      return `${group(node.positive)} NOT ${neg}`;
    }
  }
}

/** Maps every term of a tree; a term mapped to `null` is removed (and emptied groups with it). */
export function mapTerms(node: QueryNode, fn: (t: QueryTerm) => QueryTerm | null): QueryNode | null {
  switch (node.kind) {
    case "term":
      return fn(node);
    case "and":
    case "or": {
      const children = node.children.map((c) => mapTerms(c, fn)).filter((c): c is QueryNode => c !== null);
      if (children.length === 0) return null;
      return children.length === 1 ? (children[0] as QueryNode) : { kind: node.kind, children };
    }
    case "not": {
      const positive = mapTerms(node.positive, fn);
      if (positive === null) return null;
      const negative = node.negative.map((c) => mapTerms(c, fn)).filter((c): c is QueryNode => c !== null);
      return negative.length === 0 ? positive : { kind: "not", positive, negative };
    }
  }
}
