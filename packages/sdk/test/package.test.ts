// What the registry page and a customer's tools read from the package: its license, where its
// code and issues are, a README whose links work outside this repository, and the runtimes.

import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const read = (file: string) => readFileSync(new URL(`../${file}`, import.meta.url), 'utf8');
const pkg = JSON.parse(read('package.json')) as {
  license: string;
  files: string[];
  engines: { node: string };
  repository: { url: string; directory: string };
  homepage: string;
  bugs: { url: string };
};
const readme = read('README.md');

describe('the published package', () => {
  it('ships the license it names', () => {
    expect(pkg.license).toBe('MIT');
    expect(pkg.files).toContain('LICENSE');
    expect(existsSync(new URL('../LICENSE', import.meta.url))).toBe(true);
    expect(read('LICENSE')).toMatch(/^MIT License/);
  });

  it('says where its code, home page and issues are', () => {
    expect(pkg.repository.url).toMatch(/^git\+https:\/\/github\.com\/.+\.git$/);
    expect(pkg.repository.directory).toBe('packages/sdk');
    expect(pkg.homepage).toMatch(/^https:\/\//);
    expect(pkg.bugs.url).toMatch(/^https:\/\/.+\/issues$/);
  });

  it('has a README whose links work on the registry page: absolute or in-page', () => {
    const targets = [...readme.matchAll(/\]\(([^)]+)\)/g)].map((match) => match[1]!);
    expect(targets.length).toBeGreaterThan(0);
    for (const target of targets) expect(target).toMatch(/^(https:\/\/|#)/);
  });

  it('states the supported runtimes its engines field allows, and the dual-package hazard', () => {
    expect(pkg.engines.node).toBe('>=20.19');
    expect(readme).toContain('## Supported runtimes');
    expect(readme).toContain('Node.js 20.19 or later');
    expect(readme).toMatch(/not an\s+`instanceof` the other copy's class/);
  });
});
