// What the process remembers of capped experiments for PostgreSQL's routing (postgres-router.ts):
// the capped experiment each target ran when a batch last routed to it, per database. The next
// batch for the target takes that experiment's turn before it begins, instead of finding out in a
// transaction it must then roll back. A stale entry (the experiment ended) costs an unneeded
// lock; a missing one costs that rollback, once.

import type { PostgresDb } from '../../db/engine/client.js';
import { perDatabase, remember } from '../../db/engine/caches.js';

/** How a routed target is named in these maps: `organizationId:targetId`. */
export function targetKey(organizationId: number, targetId: number): string {
  return `${organizationId}:${targetId}`;
}

const cappedExperimentOfTarget = perDatabase((_db: PostgresDb) => new Map<string, number>());
/** Targets remembered per database; past it the one routed to longest ago is forgotten. */
const CAPPED_TARGETS_REMEMBERED = 10_000;

/** The capped experiments the targets ran when last routed to, each once. */
export function knownCappedExperiments(
  db: PostgresDb,
  targets: ReadonlyArray<{ organizationId: number; targetId: number }>,
): number[] {
  const cappedOfTarget = cappedExperimentOfTarget(db);
  const known = targets.flatMap(
    ({ organizationId, targetId }) => cappedOfTarget.get(targetKey(organizationId, targetId)) ?? [],
  );
  return [...new Set(known)];
}

/** Remembers the capped experiment each target was found to run. */
export function rememberCappedExperiments(
  db: PostgresDb,
  experimentsOfTargets: ReadonlyMap<string, number>,
): void {
  const cappedOfTarget = cappedExperimentOfTarget(db);
  for (const [target, experimentId] of experimentsOfTargets) {
    remember(cappedOfTarget, target, experimentId, CAPPED_TARGETS_REMEMBERED);
  }
}
