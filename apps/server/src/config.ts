// The only module that reads process.env: every setting is parsed and validated once here, so a
// bad value stops start-up with a message that names the variable instead of failing later.

import { isIP } from 'node:net';
import { isPostgresUrl } from './db/engine/client.js';
import type { IdempotencyTimes } from './db/repositories/idempotency.js';

export interface Config {
  /** `postgres://...` selects PostgreSQL; anything else is a SQLite file path (or `:memory:`). */
  databaseUrl: string;
  /** PostgreSQL connections this process may open (ignored on SQLite, which has one). */
  databasePoolSize: number;
  /** A streaming replica of the PostgreSQL primary that serves list reads; unset: none. */
  databaseReadUrl: string | undefined;
  /** How far behind the primary the replica may be and still serve a list read, in milliseconds. */
  replicaMaxLagMs: number;
  /** SQLite: threads that read the events list off the event loop; 0 reads inline. */
  sqliteReaderThreads: number;
  host: string;
  port: number;
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  /** Largest accepted request body, in bytes. */
  bodyLimitBytes: number;
  /** Requests one API key may make per minute in this process; 0 turns the limit off. */
  rateLimitPerMinute: number;
  /** Requests one API key may have in progress at once in this process; 0 turns the limit off. */
  concurrentRequestsPerKey: number;
  /** Of those, list reads that run at once; 0 gives them no cap of their own. */
  concurrentListReadsPerKey: number;
  /** Requests of one API key that may wait for a slot at once; past it, 429; 0 waits none. */
  queuedRequestsPerKey: number;
  /** How long a request may wait for a slot of its key before it is answered 429. */
  queueWaitMs: number;
  /** Event streams one API key may hold open at once in this process. */
  eventStreamsPerKey: number;
  /** Bytes one event stream may have waiting in the process for a client that reads slowly. */
  eventStreamBufferBytes: number;
  /** What the kept list answers may hold in this process, keys and overhead counted; 0 keeps none. */
  keptAnswersMaxBytes: number;
  /** How long a list read may run before it is stopped (a 422); 0 lets it run. */
  listQueryTimeoutMs: number;
  /** Webhook endpoints may use plain http URLs, not only https (tests, local development). */
  webhookAllowHttp: boolean;
  /** Webhooks may go to loopback, private and other non-public addresses (tests, local development). */
  webhookAllowPrivateAddresses: boolean;
  /**
   * Failed authentications one client address (IPv6: one /64), and one key id, may have per
   * minute; 0 turns the limit off. One setting for both: neither budget ever refuses a valid key.
   */
  authFailuresPerMinute: number;
  /** Proxies whose X-Forwarded-For header names the client (IP addresses, any spelling). */
  trustedProxies: ReadonlySet<string>;
  /** How long an Idempotency-Key answer is replayed before it is swept away. */
  idempotencyRetentionSeconds: number;
  /** How long a claimed Idempotency-Key waits for its answer before a retry may take it over. */
  idempotencyLeaseSeconds: number;
  /** The bearer token /metrics requires; unset turns /metrics off (404). */
  metricsToken: string | undefined;
  /**
   * Days of events kept, by their timestamp, for organizations without a window of their own;
   * 0 keeps every event (an upgrade never deletes anything by itself).
   */
  eventRetentionDays: number;
  /** How long a process holds a webhook endpoint it delivers for before another may take it over. */
  webhookLeaseMs: number;
  /** The waits before each retry of a failed webhook delivery, in milliseconds. */
  webhookRetrySchedule: readonly number[];
}

export class ConfigError extends Error {
  override name = 'ConfigError';
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/** The longest retention window, in days: a hundred years, beyond any policy's need. */
export const MAX_EVENT_RETENTION_DAYS = 36_500;

export const DEFAULT_DATABASE_URL = 'data/agentline.db';

function readInteger(
  env: NodeJS.ProcessEnv,
  name: string,
  fallback: number,
  min: number,
  max: number,
): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
    throw new ConfigError(`${name} must be a whole number from ${min} to ${max}, got "${raw}".`);
  }
  return Number(raw);
}

function readBoolean(env: NodeJS.ProcessEnv, name: string, fallback: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (raw !== 'true' && raw !== 'false') {
    throw new ConfigError(`${name} must be true or false, got "${raw}".`);
  }
  return raw === 'true';
}

function readTrustedProxies(env: NodeJS.ProcessEnv): ReadonlySet<string> {
  const raw = env.TRUSTED_PROXIES ?? '';
  const addresses = raw
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
  const invalid = addresses.find((address) => isIP(address) === 0);
  if (invalid !== undefined) {
    throw new ConfigError(
      `TRUSTED_PROXIES must be a comma-separated list of IP addresses, got "${invalid}".`,
    );
  }
  return new Set(addresses);
}

// Long enough that guessing is hopeless; printable ASCII without spaces, so it fits a header as is.
const METRICS_TOKEN_FORMAT = /^[\x21-\x7e]{16,256}$/;

function readMetricsToken(env: NodeJS.ProcessEnv): string | undefined {
  const raw = env.METRICS_TOKEN;
  if (raw === undefined || raw === '') return undefined;
  if (!METRICS_TOKEN_FORMAT.test(raw)) {
    // The value itself is a secret: say what is wrong with it, never echo it.
    throw new ConfigError(
      `METRICS_TOKEN must be 16 to 256 printable characters without spaces (got ${raw.length} characters).`,
    );
  }
  return raw;
}

const DURATION_UNITS_MS: Record<string, number> = {
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
};
const DURATION = /^(\d+)(ms|s|m|h|d)$/;
/** Retries a failed message gets at most, and the longest wait before one. */
const MAX_RETRIES = 30;
const MAX_RETRY_WAIT_MS = 7 * 86_400_000;

function readRetrySchedule(env: NodeJS.ProcessEnv): readonly number[] {
  const raw = env.WEBHOOK_RETRY_SCHEDULE || '5s,5m,30m,2h,5h,10h,10h';
  const waits = raw.split(',').map((entry) => {
    const match = DURATION.exec(entry.trim());
    const ms = match ? Number(match[1]) * DURATION_UNITS_MS[match[2]!]! : Number.NaN;
    return ms > 0 && ms <= MAX_RETRY_WAIT_MS ? ms : null;
  });
  if (waits.length > MAX_RETRIES || waits.some((wait) => wait === null)) {
    throw new ConfigError(
      `WEBHOOK_RETRY_SCHEDULE must be up to ${MAX_RETRIES} comma-separated waits such as 50ms, 5s, 5m, 2h or 1d (each above zero and at most 7d), got "${raw}".`,
    );
  }
  return waits as number[];
}

function readReplicaUrl(env: NodeJS.ProcessEnv): string | undefined {
  const raw = env.DATABASE_READ_URL;
  if (!raw) return undefined;
  if (!isPostgresUrl(raw) || !isPostgresUrl(env.DATABASE_URL ?? '')) {
    throw new ConfigError(
      'DATABASE_READ_URL must be a postgres:// URL of a streaming replica of DATABASE_URL, which must be PostgreSQL too; SQLite has no replicas.',
    );
  }
  return raw;
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const logLevel = env.LOG_LEVEL || 'info';
  if (!(LOG_LEVELS as readonly string[]).includes(logLevel)) {
    throw new ConfigError(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}, got "${logLevel}".`);
  }
  // Read where PostgreSQL is opened (db/engine/client.ts); a typo stops the start here.
  readBoolean(env, 'DATABASE_PREPARED_STATEMENTS', true);
  return {
    databaseUrl: env.DATABASE_URL || DEFAULT_DATABASE_URL,
    databasePoolSize: readInteger(env, 'DATABASE_POOL_SIZE', 10, 1, 1000),
    databaseReadUrl: readReplicaUrl(env),
    // A replica a second behind is not waited for by list reads, nor read by replays: the primary
    // serves them until it catches up (runtime/replica-reads.ts).
    replicaMaxLagMs: readInteger(env, 'REPLICA_MAX_LAG_MS', 1_000, 0, 600_000),
    sqliteReaderThreads: readInteger(env, 'SQLITE_READER_THREADS', 2, 0, 64),
    host: env.HOST || '127.0.0.1',
    port: readInteger(env, 'PORT', 8080, 0, 65535),
    logLevel: logLevel as Config['logLevel'],
    bodyLimitBytes: readInteger(env, 'BODY_LIMIT_BYTES', 1024 * 1024, 1024, 100 * 1024 * 1024),
    rateLimitPerMinute: readInteger(env, 'RATE_LIMIT_PER_MINUTE', 300_000, 0, 100_000_000),
    // Below the list connections of the default pool (half of DATABASE_POOL_SIZE's 10): one key
    // cannot hold them all (README, Configuration).
    concurrentRequestsPerKey: readInteger(env, 'CONCURRENT_REQUESTS_PER_KEY', 4, 0, 100_000),
    // Two slow list reads of a key keep at most two database cores busy, whatever the cores.
    concurrentListReadsPerKey: readInteger(env, 'CONCURRENT_LIST_READS_PER_KEY', 2, 0, 100_000),
    // A dashboard or a router's burst waits instead of failing; past this, a backlog is not a
    // burst but more than the key's share can serve in QUEUE_WAIT_MS (README, Configuration).
    queuedRequestsPerKey: readInteger(env, 'QUEUED_REQUESTS_PER_KEY', 256, 0, 100_000),
    // A queued request's body is not read while it waits, and a request must arrive whole within
    // main.ts's 30 s request timeout: the wait stays well inside it.
    queueWaitMs: readInteger(env, 'QUEUE_WAIT_MS', 10_000, 1, 20_000),
    eventStreamsPerKey: readInteger(env, 'EVENT_STREAMS_PER_KEY', 10, 1, 100_000),
    eventStreamBufferBytes: readInteger(
      env,
      'EVENT_STREAM_BUFFER_BYTES',
      4 * 1024 * 1024,
      64 * 1024,
      1024 * 1024 * 1024,
    ),
    // Thousands of default pages of each kept list, and a bounded share of a small server.
    keptAnswersMaxBytes: readInteger(
      env,
      'KEPT_ANSWERS_MAX_BYTES',
      64 * 1024 * 1024,
      0,
      64 * 1024 * 1024 * 1024,
    ),
    listQueryTimeoutMs: readInteger(env, 'LIST_QUERY_TIMEOUT_MS', 5_000, 0, 3_600_000),
    webhookAllowHttp: readBoolean(env, 'WEBHOOK_ALLOW_HTTP', false),
    webhookAllowPrivateAddresses: readBoolean(env, 'WEBHOOK_ALLOW_PRIVATE_ADDRESSES', false),
    authFailuresPerMinute: readInteger(env, 'AUTH_FAILURES_PER_MINUTE', 60, 0, 1_000_000),
    trustedProxies: readTrustedProxies(env),
    idempotencyRetentionSeconds: readInteger(
      env,
      'IDEMPOTENCY_RETENTION_SECONDS',
      86_400,
      1,
      30 * 86_400,
    ),
    idempotencyLeaseSeconds: readInteger(env, 'IDEMPOTENCY_LEASE_SECONDS', 60, 1, 86_400),
    metricsToken: readMetricsToken(env),
    eventRetentionDays: readInteger(env, 'EVENT_RETENTION_DAYS', 0, 0, MAX_EVENT_RETENTION_DAYS),
    // Renewed every third of it: a process that stops renewing (killed, cut off from the
    // database) hands its endpoints over within one lease.
    webhookLeaseMs: readInteger(env, 'WEBHOOK_LEASE_MS', 15_000, 300, 600_000),
    webhookRetrySchedule: readRetrySchedule(env),
  };
}

/** The configuration of an environment that sets nothing: every default, written once above. */
export const DEFAULT_CONFIG: Config = loadConfig({});

/** How long Idempotency-Key answers are replayed and claims leased, in milliseconds. */
export function idempotencyTimesOf(
  config: Pick<Config, 'idempotencyRetentionSeconds' | 'idempotencyLeaseSeconds'>,
): IdempotencyTimes {
  return {
    retentionMs: config.idempotencyRetentionSeconds * 1000,
    leaseMs: config.idempotencyLeaseSeconds * 1000,
  };
}
