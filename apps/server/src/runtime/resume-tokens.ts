// The resume tokens of the event stream (the SSE `id` of each event, sent back as Last-Event-ID):
// the event id and its organization's id in one block, encrypted under a key of the
// organization's own, as event ids are one sequence shared by every organization
// (docs/architecture.md, "Resume tokens").

import {
  createCipheriv,
  createDecipheriv,
  hkdfSync,
  type Cipher,
  type Decipher,
} from 'node:crypto';
import type { Db } from '../db/engine/client.js';
import { perDatabase, remember } from '../db/engine/caches.js';
import {
  ensureResumeTokenSecret,
  readResumeTokenSecret,
  type StoredSecret,
} from '../db/repositories/resume-tokens.js';
import { newServerSecret } from '../domain/server-secrets.js';

const BLOCK_BYTES = 16;
/**
 * Set in the organization half of a history token's block: organization ids never reach it, so an
 * event token is what it always was, and neither kind decrypts as the other.
 */
const HISTORY_FLAG = 0x80;

/** What a token's position counts: events, or experiment history entries. */
export type PositionKind = 'event' | 'history';
const TOKEN = /^[A-Za-z0-9_-]{22}$/;
const DECIMAL_TOKEN = /^\d{1,16}$/;
const HKDF_SALT = 'agentline resume token';
/**
 * Organizations whose ciphers a process keeps at once (a few hundred bytes each); one that comes
 * back after it was dropped has them set up again.
 */
const CIPHERS_KEPT = 1000;

function writeId(block: Buffer, offset: number, id: number): void {
  // Two 32-bit halves: ids are safe integers, and this avoids a BigInt per token.
  block.writeUInt32BE(Math.floor(id / 2 ** 32), offset);
  block.writeUInt32BE(id >>> 0, offset + 4);
}

function readId(block: Buffer, offset: number): number {
  return block.readUInt32BE(offset) * 2 ** 32 + block.readUInt32BE(offset + 4);
}

/** The id a decrypted block holds, if it was made for the organization. */
function idOf(block: Buffer, organizationId: number): number | null {
  if (readId(block, 8) !== organizationId) return null;
  const id = readId(block, 0);
  return Number.isSafeInteger(id) ? id : null;
}

/**
 * An organization's ciphers, kept open: ECB takes block after block without a final, and setting
 * one up (HKDF, then the cipher) costs far more than a token does.
 */
interface OrganizationCiphers {
  encrypt: Cipher;
  decrypt: Decipher;
}

export class ResumeTokens {
  #secret: StoredSecret | undefined;
  #loading: Promise<void> | undefined;
  readonly #kept = new Map<number, OrganizationCiphers>();

  constructor(private readonly db: Db) {}

  /** Resolves once the secret is read; the first call reads it, a failed read is tried again. */
  ready(): Promise<void> {
    this.#loading ??= (async () => {
      let secret = await readResumeTokenSecret(this.db);
      if (!secret) {
        // A database migrated before the secret existed, or emptied by hand.
        await ensureResumeTokenSecret(this.db, newServerSecret());
        secret = await readResumeTokenSecret(this.db);
      }
      this.#secret = secret!;
    })().catch((error: unknown) => {
      this.#loading = undefined;
      throw error;
    });
    return this.#loading;
  }

  /**
   * The tokens of the organization's events `ids` (or, with `history`, of its experiment history
   * entries: webhook messages of status changes), in the same order.
   */
  make(organizationId: number, ids: readonly number[], kind: PositionKind = 'event'): string[] {
    const blocks = Buffer.allocUnsafe(ids.length * BLOCK_BYTES);
    ids.forEach((id, index) => {
      writeId(blocks, index * BLOCK_BYTES, id);
      writeId(blocks, index * BLOCK_BYTES + 8, organizationId);
      if (kind === 'history') {
        const at = index * BLOCK_BYTES + 8;
        blocks.writeUInt8(blocks.readUInt8(at) | HISTORY_FLAG, at);
      }
    });
    const encrypted = this.#ciphers(organizationId).encrypt.update(blocks);
    return ids.map((_, index) =>
      encrypted.toString('base64url', index * BLOCK_BYTES, (index + 1) * BLOCK_BYTES),
    );
  }

  /**
   * The event id `token` names, if this API gave it to the organization (or it is a decimal id,
   * as tokens were before); otherwise null. Whether the organization has such an event is the
   * caller's to check.
   */
  position(organizationId: number, token: string): number | null {
    if (DECIMAL_TOKEN.test(token)) {
      const id = Number(token);
      return id <= this.#stored().decimalThrough ? id : null;
    }
    const block = this.#decrypted(organizationId, token);
    return block ? idOf(block, organizationId) : null;
  }

  /**
   * What `token` names, an event or an experiment history entry and its id, if this API gave it
   * to the organization (or it is a decimal event id, as tokens were before); otherwise null.
   */
  positionOf(organizationId: number, token: string): { kind: PositionKind; id: number } | null {
    const event = this.position(organizationId, token);
    if (event !== null) return { kind: 'event', id: event };
    const block = this.#decrypted(organizationId, token);
    const flags = block?.readUInt8(8) ?? 0;
    if (!block || (flags & HISTORY_FLAG) === 0) return null;
    block.writeUInt8(flags & ~HISTORY_FLAG, 8);
    const id = idOf(block, organizationId);
    return id === null ? null : { kind: 'history', id };
  }

  /** The block a token encrypts under the organization's key, if it is spelled as ours are. */
  #decrypted(organizationId: number, token: string): Buffer | null {
    if (!TOKEN.test(token)) return null;
    const encrypted = Buffer.from(token, 'base64url');
    // The last character carries four unused bits: only the spelling this API sends is its token.
    if (encrypted.toString('base64url') !== token) return null;
    return this.#ciphers(organizationId).decrypt.update(encrypted);
  }

  #stored(): StoredSecret {
    if (!this.#secret) throw new Error('the resume token secret has not been read yet (ready())');
    return this.#secret;
  }

  #ciphers(organizationId: number): OrganizationCiphers {
    let ciphers = this.#kept.get(organizationId);
    if (!ciphers) {
      const key = Buffer.from(
        hkdfSync(
          'sha256',
          this.#stored().key,
          HKDF_SALT,
          `organization ${organizationId}`,
          BLOCK_BYTES,
        ),
      );
      const encrypt = createCipheriv('aes-128-ecb', key, null).setAutoPadding(false);
      const decrypt = createDecipheriv('aes-128-ecb', key, null).setAutoPadding(false);
      ciphers = { encrypt, decrypt };
    }
    remember(this.#kept, organizationId, ciphers, CIPHERS_KEPT);
    return ciphers;
  }
}

/** The database's resume tokens; `ready()` before the first token is made or read. */
export const resumeTokensOf = perDatabase((db: Db) => new ResumeTokens(db));
