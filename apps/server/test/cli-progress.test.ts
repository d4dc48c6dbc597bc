// Progress lines of long imports: redrawn in place on a terminal, throttled plain lines elsewhere.

import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { Progress } from '../src/cli/progress.js';

function fakeStream(isTTY: boolean) {
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      stream.text += chunk.toString();
      done();
    },
  }) as Writable & { text: string; isTTY: boolean };
  stream.text = '';
  stream.isTTY = isTTY;
  return stream;
}

describe('Progress', () => {
  it('writes plain lines at most every two seconds when stderr is not a terminal', () => {
    let now = 0;
    const stream = fakeStream(false);
    const progress = new Progress({
      stream,
      unit: 'events',
      size: 1000,
      position: () => now / 10,
      now: () => now,
    });
    now = 1000;
    progress.update({ lines: 10, done: 10 });
    expect(stream.text).toBe('');
    now = 2500;
    progress.update({ lines: 250, done: 250 });
    now = 3000;
    progress.update({ lines: 300, done: 300 });
    progress.finish();
    expect(stream.text).toBe('250 lines, 250 events, 100 events/s, 25%, ETA 7.5 s\n');
  });

  it('redraws one line on a terminal and ends it when done', () => {
    let now = 0;
    const stream = fakeStream(true);
    const progress = new Progress({ stream, unit: 'events', now: () => now });
    now = 150;
    progress.update({ lines: 15, done: 15 });
    now = 300;
    progress.update({ lines: 30, done: 29 });
    progress.finish();
    expect(stream.text).toBe(
      '\r\x1b[K15 lines, 15 events, 100 events/s\r\x1b[K30 lines, 29 events, 97 events/s\n',
    );
  });
});
