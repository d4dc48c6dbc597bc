/**
 * Fails when a hand-written source file is longer than the house limit, naming each such file,
 * its length and the limit: past it, a file is split by job. Generated files (`generated/`
 * folders, written from the spec by `pnpm gen`) are not counted; the files allowed past the
 * limit are listed below, each with its reason. `pnpm lint:size`, part of `pnpm lint`.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const MAX_LINES = 450;

const SOURCE_FILE = /\.(ts|tsx|cjs|mjs|js)$/;
const GENERATED_FOLDER = /(^|\/)generated\//;

/** Files allowed past the limit for good, and why. */
const EXEMPT: Record<string, string> = {
  'tools/zod-routes.ts':
    'the spec-to-routes generator, one job kept in one place (docs/architecture.md, "The route generator")',
  'apps/server/src/db/schema/sqlite.ts':
    "a database's whole schema in one module, from which drizzle-kit generates its migrations",
  'apps/server/src/db/schema/postgres.ts':
    "a database's whole schema in one module, from which drizzle-kit generates its migrations",
};

const root = fileURLToPath(new URL('..', import.meta.url));

function lineCount(path: string): number {
  const text = readFileSync(`${root}${path}`, 'utf8');
  return text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
}

// Tracked files and new ones not yet added (but not ignored ones), as they are on disk.
const files = execFileSync(
  'git',
  ['ls-files', '-z', '--cached', '--others', '--exclude-standard'],
  { cwd: root, encoding: 'utf8' },
)
  .split('\0')
  .filter((path) => SOURCE_FILE.test(path) && !GENERATED_FOLDER.test(path))
  .filter((path) => existsSync(`${root}${path}`));

const lengths = new Map(files.map((path) => [path, lineCount(path)]));
const problems: string[] = [];

for (const [path, lines] of lengths) {
  if (lines > MAX_LINES && !(path in EXEMPT)) {
    problems.push(`${path}: ${lines} lines, over the limit of ${MAX_LINES}: split it by job`);
  }
}
for (const path of Object.keys(EXEMPT)) {
  const lines = lengths.get(path);
  if (lines === undefined || lines <= MAX_LINES) {
    problems.push(
      `${path}: ${lines === undefined ? 'no such source file' : `${lines} lines, within the limit of ${MAX_LINES}`}: remove it from EXEMPT in tools/file-size-check.ts`,
    );
  }
}

if (problems.length > 0) {
  console.error(problems.join('\n'));
  process.exitCode = 1;
} else {
  console.log(`${files.length} hand-written source files, none over ${MAX_LINES} lines`);
}
