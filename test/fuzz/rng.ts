/** A small seeded PRNG (mulberry32) and helpers, so every fuzz case is reproducible from (seed, index). */

export interface Rng {
  /** A float in [0, 1). */
  next(): number;
  /** An integer in [min, max] (inclusive). */
  int(min: number, max: number): number;
  /** True with probability p. */
  chance(p: number): boolean;
  pick<T>(items: readonly T[]): T;
  /** A 32-bit unsigned integer. */
  u32(): number;
}

export function mulberry32(seed: number): Rng {
  let a = seed >>> 0;
  const u32 = (): number => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (t ^ (t >>> 14)) >>> 0;
  };
  const next = () => u32() / 4294967296;
  return {
    next,
    u32,
    int: (min, max) => min + Math.floor(next() * (max - min + 1)),
    chance: (p) => next() < p,
    pick: (items) => {
      if (items.length === 0) throw new Error("pick from an empty list");
      return items[Math.floor(next() * items.length)]!;
    },
  };
}

/** A 32-bit finaliser (murmur3's): every input bit moves every output bit. */
function mix32(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b) >>> 0;
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35) >>> 0;
  h ^= h >>> 16;
  return h >>> 0;
}

/**
 * The seed of case `index` of a campaign seeded with `seed`: the campaign's
 * seed is hashed first and the index added after, so two campaigns share no
 * cases unless their hashed seeds fall within one campaign's length of each
 * other (with the index XORed into the seed, seeds 2k and 2k+1 ran the very
 * same cases in another order).
 */
export function caseSeed(seed: number, index: number): number {
  return mix32((mix32((seed ^ 0x9e3779b9) >>> 0) + index) >>> 0);
}
