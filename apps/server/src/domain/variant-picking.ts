// Which variant of a running experiment answers a new session (docs/decisions.md section 7).
// The 100 buckets are laid out by weight in variant order: weights 70/30 give buckets 0-69 to the
// first variant and 70-99 to the second. A known user hashes to a fixed bucket, so the same user
// on the same experiment always gets the same variant, in every server process.

import { hash } from 'node:crypto';

export interface WeightedVariant {
  id: number;
  weight: number;
}

const BUCKETS = 100;

/** The bucket (0-99) of a user in an experiment: stable across processes and restarts. */
export function stickyBucket(experimentId: number, userId: string): number {
  const digest = hash('sha256', `${experimentId}:${userId}`, 'buffer');
  // 2^32 is not a multiple of 100, but the bias (under one in forty million) is far below noise.
  return digest.readUInt32BE(0) % BUCKETS;
}

/**
 * Picks the variant for a session: sticky by `userId` when there is one, random by weight
 * otherwise. `random` returns a number in [0, 1) and is a parameter so tests can drive it.
 */
export function pickVariant<V extends WeightedVariant>(
  variants: readonly V[],
  experimentId: number,
  userId: string | null,
  random: () => number = Math.random,
): V {
  const bucket =
    userId === null ? Math.floor(random() * BUCKETS) : stickyBucket(experimentId, userId);
  let upper = 0;
  for (const variant of variants) {
    upper += variant.weight;
    if (bucket < upper) return variant;
  }
  // Weights total 100 by the experiment rules; this only guards against a broken invariant.
  throw new Error(`experiment ${experimentId}: variant weights total ${upper}, not ${BUCKETS}`);
}
