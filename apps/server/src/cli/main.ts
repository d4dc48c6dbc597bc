#!/usr/bin/env node
import { runCli } from './run.js';

// `agentline key create ... | head -1` closes the pipe early; that is not a failure.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE') throw error;
  });
}

// Ctrl-C (or a SIGTERM) stops a command that follows (`events tail`) cleanly.
const interrupted = new AbortController();
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => interrupted.abort());
}

process.exitCode = await runCli(process.argv.slice(2), {
  stdout: process.stdout,
  stderr: process.stderr,
  stdin: process.stdin,
  env: process.env,
  signal: interrupted.signal,
});
