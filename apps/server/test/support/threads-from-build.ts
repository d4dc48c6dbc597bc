// Set up in every test file (vitest.config.ts, setupFiles): the threads an app in the test's
// process starts (SQLite's readers, the webhook thread) run the test run's bundle of the server,
// as its server processes do, rather than the sources under tsx.

import { runThreadsFromBuild } from '../../src/runtime/module-thread.js';
import { testRunBuild } from './server-build.js';

runThreadsFromBuild(testRunBuild()!);
