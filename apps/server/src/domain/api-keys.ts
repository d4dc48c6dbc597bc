// API keys look like `agl_<key id>_<secret>`. The key id is public (stored in clear, used to find
// the row); only a SHA-256 of the secret is stored. The secret is 32 random base62 characters
// (about 190 bits), far beyond guessing, so a fast unsalted hash is the right tool here: a slow
// password hash would only add latency to every request.

import { createHash, randomInt, timingSafeEqual } from 'node:crypto';

const KEY_ID_ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';
const SECRET_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const KEY_ID_LENGTH = 12;
const SECRET_LENGTH = 32;
const KEY_ID_PATTERN = /^[a-z0-9]{12}$/;
const API_KEY_PATTERN = /^agl_([a-z0-9]{12})_([A-Za-z0-9]{32})$/;

export interface ApiKeyParts {
  keyId: string;
  secret: string;
}

function randomString(alphabet: string, length: number): string {
  let text = '';
  for (let i = 0; i < length; i += 1) text += alphabet[randomInt(alphabet.length)];
  return text;
}

export function generateApiKey(): ApiKeyParts {
  return {
    keyId: randomString(KEY_ID_ALPHABET, KEY_ID_LENGTH),
    secret: randomString(SECRET_ALPHABET, SECRET_LENGTH),
  };
}

export function formatApiKey({ keyId, secret }: ApiKeyParts): string {
  return `agl_${keyId}_${secret}`;
}

/** The parts of a well-formed key, or null for anything else (wrong prefix, length, alphabet). */
export function parseApiKey(presented: string): ApiKeyParts | null {
  const match = API_KEY_PATTERN.exec(presented);
  return match ? { keyId: match[1]!, secret: match[2]! } : null;
}

export function isKeyId(text: string): boolean {
  return KEY_ID_PATTERN.test(text);
}

export function hashApiKeySecret(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('hex');
}

/** Compares in constant time so response timing does not leak how much of a guess was right. */
export function apiKeySecretMatches(secret: string, storedSecretHash: string): boolean {
  const presented = Buffer.from(hashApiKeySecret(secret), 'hex');
  const stored = Buffer.from(storedSecretHash, 'hex');
  return presented.length === stored.length && timingSafeEqual(presented, stored);
}
