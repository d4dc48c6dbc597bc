/**
 * Reads the JSON report of `redocly diff` and prints the breaking (major) changes that
 * spec/accepted-breaking.yaml does not accept; exits non-zero when there is any. Used by
 * tools/spec-breaking-check.sh.
 */
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';

interface Change {
  kind?: string;
  impact?: string;
  property?: string;
  path?: string;
  revision?: { value?: unknown };
  verdicts?: Array<{ message?: string }>;
}

interface Accepted {
  version: string;
  accepted: Array<{ keyword: string; value: unknown; reason: string }>;
}

const [reportPath, acceptedPath, version] = process.argv.slice(2);
if (!reportPath || !acceptedPath || !version) {
  throw new Error(
    'usage: spec-breaking-accepted.ts <diff.json> <accepted-breaking.yaml> <version>',
  );
}
const report = JSON.parse(readFileSync(reportPath, 'utf8')) as { changes: unknown };
const accepted = parse(readFileSync(acceptedPath, 'utf8')) as Accepted;
// The list is about the version it names: a newer version starts from an empty list.
const entries = accepted.version === version ? accepted.accepted : [];

function majorChanges(node: unknown): Change[] {
  if (Array.isArray(node)) return node.flatMap(majorChanges);
  if (typeof node !== 'object' || node === null) return [];
  const change = node as Change;
  const own = change.impact === 'major' && change.kind !== undefined ? [change] : [];
  return [...own, ...Object.values(node).flatMap(majorChanges)];
}

const isAccepted = (change: Change) =>
  change.kind === 'modified' &&
  entries.some(
    (entry) => entry.keyword === change.property && entry.value === change.revision?.value,
  );

const majors = majorChanges(report.changes);
const refused = majors.filter((change) => !isAccepted(change));
console.log(
  `${majors.length - refused.length} breaking change(s) accepted by ${acceptedPath}, ${refused.length} not.`,
);
for (const change of refused) {
  const message = change.verdicts?.map((verdict) => verdict.message).join(' ') ?? '';
  console.log(`  ${change.kind} ${change.path ?? ''} ${change.property ?? ''}: ${message}`);
}
process.exitCode = refused.length > 0 ? 1 : 0;
