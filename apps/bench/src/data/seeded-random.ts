/**
 * A small deterministic pseudo-random generator (mulberry32). Data sets must be identical for a
 * given seed on every machine and Node version, which `Math.random` cannot promise.
 */
export class SeededRandom {
  #state: number;

  constructor(seed: number) {
    this.#state = seed >>> 0 || 0x9e3779b9;
  }

  /** A float in [0, 1). */
  next(): number {
    this.#state = (this.#state + 0x6d2b79f5) >>> 0;
    let t = this.#state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** An integer in [lo, hi]. */
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.next() * (hi - lo + 1));
  }

  /** True with probability `p`. */
  chance(p: number): boolean {
    return this.next() < p;
  }

  /** A uniformly chosen element. */
  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)] as T;
  }

  /** A log-normally distributed value with the given median (for text lengths). */
  logNormal(median: number, sigma: number): number {
    const u1 = this.next() || 1e-12;
    const u2 = this.next();
    const z = Math.sqrt(-2 * Math.log(u1)) * Math.cos(2 * Math.PI * u2);
    return median * Math.exp(sigma * z);
  }

  /** A child generator whose sequence depends only on this one's seed and `salt`. */
  fork(salt: number): SeededRandom {
    return new SeededRandom(Math.floor(this.next() * 2 ** 32) ^ Math.imul(salt, 0x85ebca6b));
  }
}

/**
 * Picks from a list with Zipf-like weights (the i-th item has weight 1 / (i + 1)^s), as word
 * frequencies in real text: a few terms are everywhere, most are rare.
 */
export class ZipfPicker<T> {
  readonly #items: readonly T[];
  readonly #cumulative: Float64Array;

  constructor(items: readonly T[], exponent = 1) {
    this.#items = items;
    this.#cumulative = new Float64Array(items.length);
    let total = 0;
    for (let i = 0; i < items.length; i++) {
      total += 1 / (i + 1) ** exponent;
      this.#cumulative[i] = total;
    }
    for (let i = 0; i < items.length; i++) this.#cumulative[i]! /= total;
  }

  pick(rng: SeededRandom): T {
    const x = rng.next();
    let lo = 0;
    let hi = this.#cumulative.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.#cumulative[mid]! < x) lo = mid + 1;
      else hi = mid;
    }
    return this.#items[lo] as T;
  }
}
