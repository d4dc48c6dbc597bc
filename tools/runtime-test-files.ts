// Prints the server's test files that exercise what differs between Node.js versions: a server
// process, a thread, a socket, the inspector or the SQLite addon's own tests, used directly or
// through a test/support module. scripts/test-on-node.sh --runtime runs these on another major
// version; the other files call the app in-process (app.request), the same JavaScript on any.
// A browser test is left out, as the console's are: its page runs in Chromium, and the server
// under it only serves files, as in the other files.
//
//   tsx tools/runtime-test-files.ts   (paths relative to apps/server)

import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** What a module that exercises the runtime imports or calls (the server's threads among it). */
const RUNTIME_USE = new RegExp(
  [
    "from 'node:(child_process|net|http|https|worker_threads|inspector)'",
    '\\bspawn\\(|\\.listen\\(|\\bfetch\\(',
    "(sqlite-driver|event-readers|delivery-thread|module-thread)\\.js'",
  ].join('|'),
);
const LOCAL_IMPORT = /from '\.\/(?:support\/)?([\w-]+)\.js'/g;
/** What a browser test imports: the page it drives runs in Chromium, not in Node.js. */
const BROWSER_USE = /from 'playwright-core'/;

const TEST_DIR = fileURLToPath(new URL('../apps/server/test/', import.meta.url));

/** The server's test files (as `test/<name>.test.ts`) that exercise the runtime, by name. */
export function runtimeTestFiles(testDir = TEST_DIR): string[] {
  const modules = new Map<string, string>();
  for (const folder of ['', 'support/']) {
    for (const name of readdirSync(testDir + folder).filter((file) => file.endsWith('.ts'))) {
      modules.set(
        folder + name.replace(/\.ts$/, ''),
        readFileSync(testDir + folder + name, 'utf8'),
      );
    }
  }
  const verdicts = new Map<string, boolean>();
  /** Whether `module` exercises the runtime itself or through a module it imports. */
  const usesRuntime = (module: string): boolean => {
    const known = verdicts.get(module);
    if (known !== undefined) return known;
    verdicts.set(module, false); // an import cycle adds nothing
    const text = modules.get(module) ?? '';
    const folder = module.startsWith('support/') ? 'support/' : '';
    const imported = [...text.matchAll(LOCAL_IMPORT)].map(([whole, name]) =>
      whole.includes('support/') ? `support/${name}` : folder + name,
    );
    const uses = RUNTIME_USE.test(text) || imported.some(usesRuntime);
    verdicts.set(module, uses);
    return uses;
  };
  return [...modules.keys()]
    .filter(
      (module) =>
        module.endsWith('.test') && usesRuntime(module) && !BROWSER_USE.test(modules.get(module)!),
    )
    .map((module) => `test/${module}.ts`)
    .sort();
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  console.log(runtimeTestFiles().join('\n'));
}
