// The OWASP API Security lint (`pnpm lint:owasp`, spec/spectral.yaml) fails a spec that leaves a
// request input unbounded: a scratch copy of the spec without a bound is refused, naming the rule
// and the place, so the ruleset's exceptions cannot silently cover every input.

import { execFile } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const SPECTRAL = join(ROOT, 'node_modules/.bin/spectral');
// Inside the repository, so the ruleset's `extends` resolves from its node_modules.
const scratch = mkdtempSync(join(ROOT, 'spec/.owasp-scratch-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

interface Finding {
  code: string;
  path: string[];
  severity: number;
}

async function lint(specText: string): Promise<{ failed: boolean; findings: Finding[] }> {
  writeFileSync(join(scratch, 'openapi.yaml'), specText);
  copyFileSync(join(ROOT, 'spec/spectral.yaml'), join(scratch, 'spectral.yaml'));
  const args = ['lint', join(scratch, 'openapi.yaml'), '--ruleset', join(scratch, 'spectral.yaml')];
  const flags = ['--fail-severity', 'warn', '--format', 'json', '--quiet'];
  try {
    const { stdout } = await promisify(execFile)(SPECTRAL, [...args, ...flags], { cwd: ROOT });
    return { failed: false, findings: JSON.parse(stdout || '[]') as Finding[] };
  } catch (error) {
    const { stdout } = error as { stdout: string };
    return { failed: true, findings: JSON.parse(stdout) as Finding[] };
  }
}

const spec = readFileSync(join(ROOT, 'spec/openapi.yaml'), 'utf8');

/** The spec with `bound` removed once after `anchor`; fails if the anchor is not there. */
function without(anchor: string, bound: string): string {
  const at = spec.indexOf(anchor);
  const boundAt = spec.indexOf(bound, at);
  expect(at, anchor).toBeGreaterThanOrEqual(0);
  expect(boundAt, bound).toBeGreaterThan(at);
  return spec.slice(0, boundAt) + spec.slice(boundAt + bound.length);
}

describe('the OWASP API Security lint', () => {
  // One run (several seconds): the spec with two bounds taken out fails with exactly those two
  // findings, so everything else in it passes.
  it(
    'fails a search value without maxLength and an id without maximum, and nothing else',
    { timeout: 60_000 },
    async () => {
      const unbounded = without('    SearchFieldValues:', '          maxLength: 1024\n').replace(
        '      description: The experiment.\n      schema:\n        type: integer\n        format: int32\n        minimum: 1\n        maximum: 2147483647\n',
        '      description: The experiment.\n      schema:\n        type: integer\n        format: int32\n        minimum: 1\n',
      );
      const { failed, findings } = await lint(unbounded);
      expect(failed).toBe(true);
      expect(findings.map((finding) => `${finding.code} ${finding.path.join('/')}`).sort()).toEqual(
        [
          'owasp:api4:2023-integer-limit components/parameters/ExperimentId/schema',
          'owasp:api4:2023-string-limit components/parameters/SearchFieldValues/schema/items',
        ],
      );
    },
  );
});
