// The per-session marks of a change-capture cursor, kept so that writing the cursor after a
// batch costs what the batch changed, not the number of sessions (a cursor of 100,000 sessions
// is about 6 MB of text).

/** A session as the cursor remembers it. */
export interface SessionMark {
  /** Hash of the whole session row as read (read-model fields included). */
  row: string;
  /** Highest message id the consumer holds for it (0: none). */
  maxId: number;
  /** Hash of the states of all its rows up to `maxId` (see `lightHash`). */
  rows: string;
}

const BUCKETS = 256;

function bucketOf(id: string): number {
  let h = 0;
  for (let i = 0; i < id.length; i++) h = (h * 31 + id.charCodeAt(i)) | 0;
  return (h >>> 0) % BUCKETS;
}

/**
 * Session marks by id, in buckets whose JSON text is cached: `encoded()` writes again only the
 * buckets changed since its last call.
 */
export class SessionMarks {
  readonly #buckets: Array<Map<string, SessionMark>> = Array.from({ length: BUCKETS }, () => new Map());
  readonly #text: Array<string | null> = new Array(BUCKETS).fill(null);
  #size = 0;

  get size(): number {
    return this.#size;
  }

  get(id: string): SessionMark | undefined {
    return this.#buckets[bucketOf(id)]!.get(id);
  }

  set(id: string, mark: SessionMark): void {
    const b = bucketOf(id);
    const bucket = this.#buckets[b]!;
    if (!bucket.has(id)) this.#size++;
    bucket.set(id, mark);
    this.#text[b] = null;
  }

  delete(id: string): void {
    const b = bucketOf(id);
    if (this.#buckets[b]!.delete(id)) {
      this.#size--;
      this.#text[b] = null;
    }
  }

  *keys(): IterableIterator<string> {
    for (const bucket of this.#buckets) yield* bucket.keys();
  }

  /** The marks as the members of a JSON object (without the braces). */
  encoded(): string {
    const parts: string[] = [];
    for (let b = 0; b < BUCKETS; b++) {
      let text = this.#text[b];
      if (text === null || text === undefined) {
        const entries: string[] = [];
        // Hashes are base64url: no character needs escaping.
        for (const [id, m] of this.#buckets[b]!) {
          entries.push(`${JSON.stringify(id)}:["${m.row}",${m.maxId},"${m.rows}"]`);
        }
        text = entries.join(",");
        this.#text[b] = text;
      }
      if (text !== "") parts.push(text);
    }
    return parts.join(",");
  }
}
