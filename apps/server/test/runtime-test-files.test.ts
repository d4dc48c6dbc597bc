// Which test files scripts/test-on-node.sh --runtime runs on another Node.js version: those that
// exercise the runtime themselves or through any test/support module they import, and no other;
// not a browser test, whose page runs in Chromium.

import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runtimeTestFiles } from '../../../tools/runtime-test-files.js';

const fixture = mkdtempSync(join(tmpdir(), 'runtime-test-files-'));
afterAll(() => rmSync(fixture, { recursive: true, force: true }));

function write(files: Record<string, string>): string {
  const dir = mkdtempSync(join(fixture, 'test-'));
  mkdirSync(join(dir, 'support'));
  for (const [path, text] of Object.entries(files)) writeFileSync(join(dir, path), text);
  return `${dir}/`;
}

describe('the runtime test files', () => {
  it('are those that reach a process, socket, thread or the addon, through any support module', () => {
    const dir = write({
      'through-support.test.ts': "import { serve } from './support/server.js';",
      'support/server.ts': "export { spawner } from './spawner.js';",
      'support/spawner.ts': "import { spawn } from 'node:child_process';",
      'reader-threads.test.ts':
        "import { startEventReaders } from '../src/runtime/event-readers.js';",
      'socket.test.ts': "import { createServer } from 'node:net';",
      'in-process.test.ts': "import { plain } from './support/plain.js';",
      'support/plain.ts': "import { sql } from 'drizzle-orm';",
      'cycle.test.ts': "import { a } from './support/a.js';",
      'support/a.ts': "import { b } from './b.js';",
      'support/b.ts': "import { a } from './a.js';",
      'browser.test.ts':
        "import { chromium } from 'playwright-core';\nimport { serve } from './support/server.js';",
    });
    expect(runtimeTestFiles(dir)).toEqual([
      'test/reader-threads.test.ts',
      'test/socket.test.ts',
      'test/through-support.test.ts',
    ]);
  });

  it('take in the suite its end-to-end files and leave out the in-process ones', () => {
    const files = runtimeTestFiles();
    for (const file of [
      'test/request-walks.test.ts',
      'test/list-query-timeout.test.ts',
      'test/sqlite-driver.test.ts',
      'test/webhooks-delivery-thread.test.ts',
      'test/fleet.test.ts',
    ]) {
      expect(files).toContain(file);
    }
    for (const file of [
      'test/fuzz-spec.test.ts',
      'test/events-list-pages.test.ts',
      'test/docs-browser.test.ts',
    ]) {
      expect(files).not.toContain(file);
    }
  });
});
