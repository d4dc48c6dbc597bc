// The webhook thread's own failure path: a thread that cannot open its database says so once and
// is not started again and again (its endpoints are left to other processes), and stopping it
// then still returns. Delivery through a running thread is what every delivery test exercises
// (their servers start it, main.ts).

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { createDb } from '../src/db/engine/client.js';
import { startWebhookDelivery } from '../src/runtime/webhooks/delivery-thread.js';

describe('the webhook thread', () => {
  it('that cannot start is reported once and not started again', async () => {
    const lines: Array<{ level: number; msg: string }> = [];
    const logger = pino(
      new Writable({
        write(chunk: Buffer, _encoding, done) {
          lines.push(JSON.parse(chunk.toString()) as { level: number; msg: string });
          done();
        },
      }),
    );
    const directory = mkdtempSync(join(tmpdir(), 'agentline-webhook-thread-'));
    const notADirectory = join(directory, 'file');
    writeFileSync(notADirectory, '');
    const db = createDb(':memory:');
    const delivery = startWebhookDelivery(db, logger, {
      // Under a file, not a directory: the database cannot be created there.
      databaseUrl: join(notADirectory, 'agentline.db'),
      listQueryTimeoutMs: 1000,
      logLevel: 'silent',
      dispatcher: {
        leaseMs: 15_000,
        retrySchedule: [1000],
        targets: { allowHttp: true, allowPrivateAddresses: true },
      },
    });
    await expect
      .poll(() => lines.map((line) => line.msg), { timeout: 10_000 })
      .toContain('the webhook thread could not start; this process delivers no webhooks');
    // Past the restart delay: nothing started again.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(lines.filter((line) => line.level >= 40).map((line) => line.msg)).toEqual([
      'the webhook thread failed',
      'the webhook thread could not start; this process delivers no webhooks',
    ]);
    await delivery.stop();
    await db.close();
    rmSync(directory, { recursive: true, force: true });
  });
});
