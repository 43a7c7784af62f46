/**
 * The last `size` values computed by `compute`, by key (least recently used dropped first): for
 * work done again on the same text where a search is routed and where it runs.
 */
export function recentCache<V>(size: number, compute: (key: string) => V): (key: string) => V {
  const recent = new Map<string, V>();
  return (key) => {
    if (recent.has(key)) {
      const known = recent.get(key) as V;
      // Most recently used last: the map iterates the oldest first.
      recent.delete(key);
      recent.set(key, known);
      return known;
    }
    const value = compute(key);
    recent.set(key, value);
    if (recent.size > size) recent.delete(recent.keys().next().value as string);
    return value;
  };
}
