// The CursorSigner (domain/list-query.ts) of a database: cursors sealed with HMAC-SHA256 under the
// secrets stored in it (db/repositories/cursor-secrets.ts), so every server process and the CLI on
// one database seal and verify alike without configuration
// (docs/architecture.md, "The cursor signer").

import { createHmac, timingSafeEqual } from 'node:crypto';
import type { CursorSigner, SealCheck } from '../domain/list-query.js';
import type { Db } from '../db/engine/client.js';
import { perDatabase } from '../db/engine/caches.js';
import { ensureCursorSecret, readCursorSecrets } from '../db/repositories/cursor-secrets.js';
import { newServerSecret } from '../domain/server-secrets.js';

/** How old the secrets a process seals with may be: a rotation reaches every process within it. */
export const SEALING_REFRESH_MS = 10_000;
/** A cursor naming an unknown secret makes the process read them again, at most this often. */
const UNKNOWN_SECRET_REFRESH_MS = 1_000;

const SEAL = /^([1-9]\d{0,9})\.([A-Za-z0-9_-]{43})$/;

interface HeldSecret {
  id: number;
  key: Buffer;
}

/** The HMAC of the payload and the secret's id, as base64url text (43 characters). */
function hmac(key: Buffer, payload: string, id: number): string {
  return createHmac('sha256', key).update(`${id}.${payload}`).digest('base64url');
}

class StoredSecretsSigner implements CursorSigner {
  /** Newest first; empty until read. */
  private held: HeldSecret[] = [];
  private readAt = Number.NEGATIVE_INFINITY;
  private reading: Promise<void> | null = null;
  private nextUnknownRead: Promise<void> | null = null;

  constructor(private readonly db: Db) {}

  get sealingSecretId(): number {
    return this.sealing().id;
  }

  seal(payload: string): string {
    const { id, key } = this.sealing();
    return `${id}.${hmac(key, payload, id)}`;
  }

  async verify(payload: string, seal: string): Promise<SealCheck> {
    const match = SEAL.exec(seal);
    if (!match) return 'forged';
    const id = Number(match[1]);
    if (id > this.sealing().id) await this.readAfterUnknown();
    const secret = this.held.find((held) => held.id === id);
    if (!secret) return id < this.held[this.held.length - 1]!.id ? 'retired' : 'forged';
    // Compared as text: the last character of base64url carries two unused bits, so decoding
    // first would accept other spellings of the same HMAC.
    const expected = Buffer.from(hmac(secret.key, payload, id));
    return timingSafeEqual(Buffer.from(match[2]!), expected) ? 'valid' : 'forged';
  }

  /** Reads the secrets unless they were read within `maxAgeMs`. */
  async fresh(maxAgeMs: number): Promise<this> {
    if (Date.now() - this.readAt >= maxAgeMs) await this.read();
    return this;
  }

  private sealing(): HeldSecret {
    const newest = this.held[0];
    if (!newest) throw new Error('the cursor secrets have not been read yet (use cursorSigner)');
    return newest;
  }

  /** One read at a time: callers that come while one runs share it. */
  private read(): Promise<void> {
    this.reading ??= (async () => {
      try {
        let rows = await readCursorSecrets(this.db);
        if (rows.length === 0) {
          // A database migrated before the secrets existed, or emptied by hand.
          await ensureCursorSecret(this.db, newServerSecret());
          rows = await readCursorSecrets(this.db);
        }
        this.held = rows.map(({ id, secret }) => ({ id, key: Buffer.from(secret, 'base64url') }));
        this.readAt = Date.now();
      } finally {
        this.reading = null;
      }
    })();
    return this.reading;
  }

  /**
   * A cursor names a secret newer than the held ones: another process sealed it after a rotation
   * (or a client made the id up). Reads the secrets again, at most once per second, so made-up
   * ids cannot make the process read them more often.
   */
  private readAfterUnknown(): Promise<void> {
    this.nextUnknownRead ??= (async () => {
      try {
        const wait = this.readAt + UNKNOWN_SECRET_REFRESH_MS - Date.now();
        if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
        await this.read();
      } finally {
        this.nextUnknownRead = null;
      }
    })();
    return this.nextUnknownRead;
  }
}

const signers = perDatabase((db: Db) => new StoredSecretsSigner(db));

/** The database's signer, with secrets read within SEALING_REFRESH_MS. */
export function cursorSigner(db: Db): Promise<CursorSigner> {
  return signers(db).fresh(SEALING_REFRESH_MS);
}
