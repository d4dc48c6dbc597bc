// SQLite schema of Agentline. Column names are snake_case (the wire and the database agree on
// them), TypeScript keys are camelCase. Timestamps are ISO-8601 UTC text with milliseconds and `Z`
// (fixed width), so text order is time order and a prefix such as `2026-05` selects a month.
// Rules that must hold across server processes (one running experiment per target, one messaging
// service per number, unique import keys) are constraints here, not checks in code.

import { sql, type SQL, type SQLWrapper } from 'drizzle-orm';
import {
  check,
  foreignKey,
  index,
  integer,
  primaryKey,
  real,
  sqliteTable,
  text,
  unique,
  uniqueIndex,
} from 'drizzle-orm/sqlite-core';
import type { ExperimentStatus } from '../../vocabulary/experiments.js';
import type { Permission } from '../../vocabulary/permissions.js';
import { everyValueOf } from '../../vocabulary/spec-enums.js';
import {
  WEBHOOK_DELIVERY_STATUSES,
  type WebhookDeliveryStatus,
  type WebhookDeliveryType,
  type WebhookMessageType,
} from '../../vocabulary/webhooks.js';
import type { EventProperty } from '../../vocabulary/events.js';

const CURRENT_ISO_TIMESTAMP = sql`(strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))`;

function isoTimestamp(name: string) {
  return text(name).notNull().default(CURRENT_ISO_TIMESTAMP);
}

function id() {
  return integer('id').primaryKey({ autoIncrement: true });
}

function organizationId() {
  return integer('organization_id')
    .notNull()
    .references(() => organizations.id);
}

export type JsonObject = { [key: string]: unknown };

export const CHANNEL_KINDS = ['telephony', 'sms', 'web_chat'] as const;
export type ChannelKind = (typeof CHANNEL_KINDS)[number];

export const TELEPHONY_PROVIDERS = ['records', 'twilio'] as const;
export type TelephonyProvider = (typeof TELEPHONY_PROVIDERS)[number];

/** The spec's ExperimentStatus values, for the column and its CHECK (both schema modules). */
// A status the spec adds fails to compile here until it is listed (and migrated).
export const EXPERIMENT_STATUSES = everyValueOf<ExperimentStatus>()([
  'draft',
  'running',
  'stopped',
]);

/** `status IN ('draft', ...)` for the CHECK constraint, from the list above. */
export function experimentStatusCheck(column: SQLWrapper): SQL {
  return sql`${column} IN (${sql.raw(EXPERIMENT_STATUSES.map((status) => `'${status}'`).join(', '))})`;
}

/** `status IN ('pending', 'delivered', 'failed')` for the webhook tables' CHECKs (both modules). */
export function webhookStatusCheck(column: SQLWrapper): SQL {
  return sql`${column} IN (${sql.raw(WEBHOOK_DELIVERY_STATUSES.map((status) => `'${status}'`).join(', '))})`;
}

export interface LlmConfig {
  model: string;
  provider: string;
  version: string | null;
}

export const organizations = sqliteTable('organizations', {
  id: id(),
  name: text('name').notNull().unique(),
  createdAt: isoTimestamp('created_at'),
  // Bumped by every load of platform records (prompts, tools, agents, ...), so servers can keep
  // answers built from those records until the version moves.
  recordsVersion: integer('records_version').notNull().default(0),
  // Retention (event-retention.ts): this organization's window in days, NULL for the server's
  // EVENT_RETENTION_DAYS, 0 to keep every event.
  eventRetentionDays: integer('event_retention_days'),
  // What retention removed so far: how many events (part of the events list's version, so kept
  // answers and counts of another process see a removal) and the highest id among them (a stream
  // or webhook position below it may have missed a removed event).
  eventsRemoved: integer('events_removed').notNull().default(0),
  eventsRemovedThrough: integer('events_removed_through').notNull().default(0),
});

export const roles = sqliteTable(
  'roles',
  {
    id: id(),
    organizationId: organizationId(),
    name: text('name').notNull(),
    permissions: text('permissions', { mode: 'json' }).$type<Permission[]>().notNull(),
    createdAt: isoTimestamp('created_at'),
  },
  (t) => [unique('roles_organization_name_unique').on(t.organizationId, t.name)],
);

export const apiKeys = sqliteTable(
  'api_keys',
  {
    id: id(),
    keyId: text('key_id').notNull().unique(),
    organizationId: organizationId(),
    roleId: integer('role_id')
      .notNull()
      .references(() => roles.id),
    name: text('name').notNull(),
    secretHash: text('secret_hash').notNull(),
    createdAt: isoTimestamp('created_at'),
    revokedAt: text('revoked_at'),
    lastUsedAt: text('last_used_at'),
  },
  (t) => [index('api_keys_organization_idx').on(t.organizationId)],
);

export const services = sqliteTable('services', {
  id: id(),
  organizationId: organizationId(),
  name: text('name').notNull(),
  createdAt: isoTimestamp('created_at'),
});

export const tools = sqliteTable(
  'tools',
  {
    id: id(),
    organizationId: organizationId(),
    // Nullable and set to NULL when the service goes: "a tool whose service is missing" is a
    // validation issue to report, not a row to refuse.
    serviceId: integer('service_id').references(() => services.id, { onDelete: 'set null' }),
    name: text('name').notNull(),
    versionNumber: integer('version_number').notNull().default(1),
    definition: text('definition', { mode: 'json' }).$type<JsonObject>().notNull(),
    lastUpdated: isoTimestamp('last_updated'),
    lastUpdatedBy: text('last_updated_by').notNull(),
    lastUpdatedComments: text('last_updated_comments'),
  },
  (t) => [index('tools_organization_name_idx').on(t.organizationId, t.name)],
);

export const prompts = sqliteTable(
  'prompts',
  {
    id: id(),
    organizationId: organizationId(),
    name: text('name').notNull(),
    type: text('type').notNull(),
    description: text('description'),
    context: text('context'),
    llmConfig: text('llm_config', { mode: 'json' }).$type<LlmConfig>().notNull(),
    sessionEndEnabled: integer('session_end_enabled', { mode: 'boolean' }).notNull().default(false),
    sessionEndToolId: integer('session_end_tool_id').references(() => tools.id, {
      onDelete: 'set null',
    }),
    versionNumber: integer('version_number').notNull().default(1),
    editComments: text('edit_comments'),
    lastUpdated: isoTimestamp('last_updated'),
    lastUpdatedBy: text('last_updated_by'),
    /**
     * The organization's agents on this prompt, kept by triggers on agents (migrations) whoever
     * writes them: what the list shows, searches and orders `agent_count` by.
     */
    agentCount: integer('agent_count').notNull().default(0),
    /**
     * The names of the prompt's tools of its organization, joined by `,` in tool id order, kept
     * by triggers on prompt_tools and tools (migrations) whoever writes them: what the list shows
     * and orders `tools` by.
     */
    toolNames: text('tool_names').notNull().default(''),
  },
  (t) => [
    index('prompts_organization_name_idx').on(t.organizationId, t.name),
    // The list's default order (id within an organization) and its count, without a sort.
    index('prompts_organization_idx').on(t.organizationId, t.id),
    // The list's orders, read in order instead of sorting the organization's prompts
    // (docs/benchmarks.md, "Every shape of the prompts and experiments lists"). Long texts are
    // indexed whole here; PostgreSQL holds a prefix of each.
    index('prompts_organization_llm_config_idx').on(t.organizationId, t.llmConfig, t.id),
    index('prompts_organization_last_updated_idx').on(t.organizationId, t.lastUpdated, t.id),
    index('prompts_organization_last_updated_by_idx').on(t.organizationId, t.lastUpdatedBy, t.id),
    index('prompts_organization_session_end_idx').on(t.organizationId, t.sessionEndEnabled, t.id),
    index('prompts_organization_agent_count_idx').on(t.organizationId, t.agentCount, t.id),
    index('prompts_organization_tool_names_idx').on(t.organizationId, t.toolNames, t.id),
    index('prompts_organization_description_idx').on(t.organizationId, t.description, t.id),
    index('prompts_organization_context_idx').on(t.organizationId, t.context, t.id),
  ],
);

export const promptTools = sqliteTable(
  'prompt_tools',
  {
    promptId: integer('prompt_id')
      .notNull()
      .references(() => prompts.id, { onDelete: 'cascade' }),
    toolId: integer('tool_id')
      .notNull()
      .references(() => tools.id, { onDelete: 'cascade' }),
  },
  (t) => [
    primaryKey({ columns: [t.promptId, t.toolId] }),
    // Covering from a tool to the prompts that link it (prompts_info of the prompts list).
    index('prompt_tools_tool_idx').on(t.toolId, t.promptId),
  ],
);

export const agents = sqliteTable(
  'agents',
  {
    id: id(),
    organizationId: organizationId(),
    name: text('name').notNull(),
    promptId: integer('prompt_id').references(() => prompts.id, { onDelete: 'set null' }),
    pinnedPromptVersion: integer('pinned_prompt_version'),
  },
  (t) => [
    index('agents_organization_name_idx').on(t.organizationId, t.name),
    // A prompt's agents within its organization: the agents using a listed prompt's tools.
    index('agents_prompt_idx').on(t.promptId, t.organizationId),
  ],
);

export const channels = sqliteTable(
  'channels',
  {
    id: id(),
    organizationId: organizationId(),
    name: text('name').notNull(),
    kind: text('kind', { enum: CHANNEL_KINDS }).notNull(),
    provider: text('provider', { enum: TELEPHONY_PROVIDERS }),
    providerConfig: text('provider_config', { mode: 'json' }).$type<JsonObject>(),
    // Credentials stay in this column only: never selected into wire objects or log lines.
    providerSecret: text('provider_secret'),
  },
  (t) => [
    index('channels_organization_name_idx').on(t.organizationId, t.name),
    check('channels_kind_check', sql`${t.kind} IN ('telephony', 'sms', 'web_chat')`),
    check(
      'channels_provider_check',
      sql`${t.provider} IS NULL OR (${t.kind} = 'telephony' AND ${t.provider} IN ('records', 'twilio'))`,
    ),
  ],
);

export const channelTargets = sqliteTable(
  'channel_targets',
  {
    id: id(),
    organizationId: organizationId(),
    channelId: integer('channel_id')
      .notNull()
      .references(() => channels.id, { onDelete: 'cascade' }),
    target: text('target').notNull(),
    targetMode: text('target_mode').notNull(),
    agentId: integer('agent_id').references(() => agents.id, { onDelete: 'set null' }),
    isAgentTest: integer('is_agent_test', { mode: 'boolean' }).notNull().default(false),
  },
  (t) => [index('channel_targets_channel_idx').on(t.channelId, t.target)],
);

export const telephonyNumbers = sqliteTable(
  'telephony_numbers',
  {
    id: id(),
    organizationId: organizationId(),
    channelId: integer('channel_id')
      .notNull()
      .references(() => channels.id, { onDelete: 'cascade' }),
    phoneNumber: text('phone_number').notNull(),
  },
  (t) => [unique('telephony_numbers_channel_phone_unique').on(t.channelId, t.phoneNumber)],
);

export const messagingServices = sqliteTable(
  'messaging_services',
  {
    id: id(),
    organizationId: organizationId(),
    sid: text('sid').notNull(),
    name: text('name').notNull(),
  },
  (t) => [
    unique('messaging_services_organization_sid_unique').on(t.organizationId, t.sid),
    // Target of the composite key below, which keeps a number's organization equal to its
    // service's organization.
    unique('messaging_services_id_organization_unique').on(t.id, t.organizationId),
  ],
);

export const messagingServiceNumbers = sqliteTable(
  'messaging_service_numbers',
  {
    messagingServiceId: integer('messaging_service_id').notNull(),
    // Carried here so the database can hold "a number is in at most one messaging service of
    // an organization" as a unique constraint.
    organizationId: organizationId(),
    phoneNumber: text('phone_number').notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.messagingServiceId, t.phoneNumber] }),
    unique('messaging_service_numbers_organization_phone_unique').on(
      t.organizationId,
      t.phoneNumber,
    ),
    foreignKey({
      name: 'messaging_service_numbers_service_fk',
      columns: [t.messagingServiceId, t.organizationId],
      foreignColumns: [messagingServices.id, messagingServices.organizationId],
    }).onDelete('cascade'),
  ],
);

export const a2pBrands = sqliteTable(
  'a2p_brands',
  {
    id: id(),
    organizationId: organizationId(),
    sid: text('sid').notNull(),
    status: text('status').notNull(),
  },
  (t) => [unique('a2p_brands_organization_sid_unique').on(t.organizationId, t.sid)],
);

export const a2pCampaigns = sqliteTable(
  'a2p_campaigns',
  {
    id: id(),
    organizationId: organizationId(),
    sid: text('sid').notNull(),
    messagingServiceId: integer('messaging_service_id')
      .notNull()
      .references(() => messagingServices.id, { onDelete: 'cascade' }),
    brandId: integer('brand_id')
      .notNull()
      .references(() => a2pBrands.id),
    campaignStatus: text('campaign_status').notNull(),
    isMock: integer('is_mock', { mode: 'boolean' }).notNull().default(false),
  },
  (t) => [
    unique('a2p_campaigns_organization_sid_unique').on(t.organizationId, t.sid),
    index('a2p_campaigns_messaging_service_idx').on(t.messagingServiceId),
  ],
);

export const sessions = sqliteTable(
  'sessions',
  {
    id: text('id').primaryKey(),
    organizationId: organizationId(),
    targetId: integer('target_id')
      .notNull()
      .references(() => channelTargets.id),
    agentId: integer('agent_id')
      .notNull()
      .references(() => agents.id),
    // Plain integers on purpose: deleting a stopped experiment keeps its sessions (docs/decisions.md section 6).
    experimentId: integer('experiment_id'),
    variantId: integer('variant_id'),
    userId: text('user_id'),
    conversationId: text('conversation_id'),
    createdAt: isoTimestamp('created_at'),
  },
  (t) => [
    index('sessions_experiment_variant_idx').on(t.experimentId, t.variantId),
    // The results timeline counts each bucket as a range of created_at, read from this index alone.
    index('sessions_experiment_created_idx').on(t.experimentId, t.createdAt, t.variantId),
  ],
);

/**
 * Routed sessions per experiment, quarter hour (UTC, `slot_start`) and variant, kept in step with
 * sessions by a trigger on their insert (migration 0012): the results and their timeline add these up
 * instead of counting a million sessions. A row per writer (PostgreSQL's backend process id; 0 on
 * SQLite, which has one writer): concurrent routing transactions never update the same row, so
 * counting adds no wait and no serialization failure to routing. Every zone's offset is a
 * multiple of 15 minutes, so an hour or day bucket of any zone is whole quarter hours.
 */
export const experimentSessionCounts = sqliteTable(
  'experiment_session_counts',
  {
    experimentId: integer('experiment_id').notNull(),
    slotStart: text('slot_start').notNull(),
    variantId: integer('variant_id').notNull(),
    writer: integer('writer').notNull(),
    sessionCount: integer('session_count').notNull(),
  },
  (t) => [primaryKey({ columns: [t.experimentId, t.slotStart, t.variantId, t.writer] })],
);

export const events = sqliteTable(
  'events',
  {
    id: id(),
    organizationId: organizationId(),
    // Identity of an imported event; NULL for events the service writes itself (NULLs never
    // collide in a unique index, so those are not deduplicated).
    importKey: text('import_key'),
    timestamp: text('timestamp').notNull(),
    sessionId: text('session_id'),
    conversationId: text('conversation_id'),
    source: text('source'),
    sourceId: text('source_id'),
    category: text('category'),
    type: text('type'),
    userId: text('user_id'),
    description: text('description'),
    attributes: text('attributes', { mode: 'json' }).$type<JsonObject>(),
  },
  (t) => [
    // Partial: events the service writes itself have no import key and skip this B-tree. With
    // the timestamp, as PostgreSQL's time partitions require of every unique index: an imported
    // event is its key at its time on both databases. The timestamp leads: an import comes
    // mostly in time order, so its batch's entries land together at the index's end, where
    // random keys first would touch a page each (docs/benchmarks.md, "Import").
    uniqueIndex('events_organization_import_key_unique')
      .on(t.organizationId, t.timestamp, t.importKey)
      .where(sql`import_key IS NOT NULL`),
    index('events_organization_timestamp_idx').on(t.organizationId, t.timestamp, t.id),
    index('events_organization_session_idx').on(t.organizationId, t.sessionId),
    index('events_organization_conversation_idx').on(t.organizationId, t.conversationId),
    index('events_organization_user_idx').on(t.organizationId, t.userId),
    // One index per ordered or filtered column: the rowid every index ends with is the list's
    // tie-breaker, so each serves ORDER BY column, id in both directions without sorting, and a
    // skip scan over it finds a low-cardinality column's distinct values in a few seeks.
    index('events_organization_category_idx').on(t.organizationId, t.category),
    index('events_organization_type_idx').on(t.organizationId, t.type),
    // The list's other properties have one too, so that their orders are no sort of all the
    // organization's events (docs/benchmarks.md, "Every shape of the events list"), but for
    // attributes: an index whose keys come in random order costs the import about a page
    // written per event, and this one beside description's made it more than a fifth slower
    // (docs/benchmarks.md, "Import"). An order by attributes still sorts.
    index('events_organization_source_idx').on(t.organizationId, t.source),
    index('events_organization_source_id_idx').on(t.organizationId, t.sourceId),
    index('events_organization_description_idx').on(t.organizationId, t.description),
  ],
);

/**
 * Events per organization, hour of `timestamp` (its first 13 characters, `YYYY-MM-DDTHH`, UTC)
 * and value of a low-cardinality property: `property` '' with `value` '' counts every event,
 * 'category', 'type' and 'source' count those with that value (NULL is not counted). Kept in step
 * with events by triggers on their insert and delete (migration 0017), in the writing
 * transaction, so a read sees counts of exactly the events it sees. The list turns a page number
 * into a position with them: the hours newer (or older) than a page's add up to its offset, and
 * only the rest of one hour is skipped row by row (repositories/event-pages.ts). An hour that
 * reaches zero is deleted, so retention leaves no rows behind.
 */
export const eventCounts = sqliteTable(
  'event_counts',
  {
    organizationId: integer('organization_id').notNull(),
    property: text('property').notNull(),
    value: text('value').notNull(),
    hour: text('hour').notNull(),
    eventCount: integer('event_count').notNull(),
  },
  (t) => [primaryKey({ columns: [t.organizationId, t.property, t.value, t.hour] })],
);

export const experiments = sqliteTable(
  'experiments',
  {
    id: id(),
    organizationId: organizationId(),
    name: text('name').notNull(),
    description: text('description'),
    targetId: integer('target_id')
      .notNull()
      .references(() => channelTargets.id),
    status: text('status', { enum: EXPERIMENT_STATUSES }).notNull().default('draft'),
    createdAt: isoTimestamp('created_at'),
    updatedAt: isoTimestamp('updated_at'),
    startedAt: text('started_at'),
    stoppedAt: text('stopped_at'),
    lastUpdatedBy: text('last_updated_by'),
    endAt: text('end_at'),
    maxSessions: integer('max_sessions'),
    endedReason: text('ended_reason'),
    /** Sessions routed while running, kept only under a max_sessions cap (counted with each). */
    routedSessions: integer('routed_sessions').notNull().default(0),
    /**
     * The control variant's agent, written with the variants (insertExperimentRow,
     * replaceVariants): what the list orders `agent_id` by, read from an index instead of looked
     * up for every row it sorts.
     */
    controlAgentId: integer('control_agent_id'),
  },
  (t) => [
    index('experiments_organization_idx').on(t.organizationId, t.id),
    // The list's orders by a column, read in order instead of sorting the organization's
    // experiments (as the prompts').
    index('experiments_organization_name_idx').on(t.organizationId, t.name, t.id),
    index('experiments_organization_status_idx').on(t.organizationId, t.status, t.id),
    index('experiments_organization_target_idx').on(t.organizationId, t.targetId, t.id),
    index('experiments_organization_created_at_idx').on(t.organizationId, t.createdAt, t.id),
    index('experiments_organization_updated_at_idx').on(t.organizationId, t.updatedAt, t.id),
    index('experiments_organization_started_at_idx').on(t.organizationId, t.startedAt, t.id),
    index('experiments_organization_stopped_at_idx').on(t.organizationId, t.stoppedAt, t.id),
    index('experiments_organization_control_agent_idx').on(
      t.organizationId,
      t.controlAgentId,
      t.id,
    ),
    index('experiments_organization_description_idx').on(t.organizationId, t.description, t.id),
    check('experiments_status_check', experimentStatusCheck(t.status)),
    // One running experiment per target, held by the database so concurrent starts (also from
    // several server processes) cannot both win.
    uniqueIndex('experiments_one_running_per_target')
      .on(t.targetId)
      .where(sql`status = 'running'`),
  ],
);

export const experimentVariants = sqliteTable(
  'experiment_variants',
  {
    id: id(),
    experimentId: integer('experiment_id')
      .notNull()
      .references(() => experiments.id, { onDelete: 'cascade' }),
    position: integer('position').notNull(),
    name: text('name').notNull(),
    weight: integer('weight').notNull(),
    isControl: integer('is_control', { mode: 'boolean' }).notNull(),
    agentId: integer('agent_id')
      .notNull()
      .references(() => agents.id),
  },
  (t) => [
    index('experiment_variants_experiment_idx').on(t.experimentId, t.position),
    // The experiments using an agent: the list's agent_id search starts from them instead of
    // looking at every experiment's variants, and an agent's delete checks its references here.
    index('experiment_variants_agent_idx').on(t.agentId, t.experimentId),
  ],
);

/**
 * Every change to an experiment (docs/decisions.md section 9), written in the change's own
 * transaction. `experiment_id` is a plain integer on purpose: the history outlives the experiment.
 */
export const experimentChanges = sqliteTable(
  'experiment_changes',
  {
    id: id(),
    organizationId: organizationId(),
    experimentId: integer('experiment_id').notNull(),
    occurredAt: text('occurred_at').notNull(),
    action: text('action').notNull(),
    /** `api_key` or `operator`; the key's id and name are set exactly for `api_key`. */
    actorType: text('actor_type').notNull(),
    actorKeyId: text('actor_key_id'),
    actorKeyName: text('actor_key_name'),
    requestId: text('request_id'),
    changes: text('changes', { mode: 'json' }).$type<JsonObject>().notNull(),
  },
  // An experiment's page, newest first, and the existence check of a deleted one.
  (t) => [index('experiment_changes_experiment_idx').on(t.organizationId, t.experimentId, t.id)],
);

/**
 * The first answer to each Idempotency-Key, per API key, replayed to retries for the retention (IDEMPOTENCY_RETENTION_SECONDS). A row
 * without a status is a request still running.
 */
export const idempotencyKeys = sqliteTable(
  'idempotency_keys',
  {
    apiKeyId: text('api_key_id').notNull(),
    key: text('key').notNull(),
    requestHash: text('request_hash').notNull(),
    status: integer('status'),
    body: text('body'),
    createdAt: text('created_at').notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.apiKeyId, t.key] }),
    // The sweep deletes the oldest rows first.
    index('idempotency_keys_created_at_idx').on(t.createdAt),
  ],
);

/**
 * Each API key's request budget (RATE_LIMIT_PER_MINUTE), one for every server process together: a
 * token bucket the processes lease a few tokens at a time from (http/fleet-rate-limit.ts).
 */
export const rateLimitBudgets = sqliteTable('rate_limit_budgets', {
  apiKeyId: text('api_key_id').primaryKey(),
  /** Tokens left when it was last brought up to date; a fraction counts toward the next one. */
  tokens: real('tokens').notNull(),
  /** When `tokens` was last brought up to date, in milliseconds since the epoch. */
  refilledAt: integer('refilled_at').notNull(),
  /** What the last lease took: PostgreSQL's RETURNING sees only the row as it became. */
  lastLease: integer('last_lease').notNull(),
});

/**
 * The server processes on this database, each heartbeating its row (runtime/fleet-members.ts):
 * how many there are divides each key's shares of requests in progress and in line between them.
 */
export const serverProcesses = sqliteTable('server_processes', {
  id: text('id').primaryKey(),
  /** Milliseconds since the epoch. */
  seenAt: integer('seen_at').notNull(),
});

/**
 * The event streams open in every server process, one row each, against EVENT_STREAMS_PER_KEY
 * (runtime/fleet-stream-slots.ts). A process renews its rows while their streams are open; a row it
 * did not renew (the process died) stops counting once it expires.
 */
export const eventStreamSlots = sqliteTable(
  'event_stream_slots',
  {
    id: text('id').primaryKey(),
    apiKeyId: text('api_key_id').notNull(),
    /** Milliseconds since the epoch. */
    expiresAt: integer('expires_at').notNull(),
  },
  (t) => [index('event_stream_slots_api_key_idx').on(t.apiKeyId)],
);

/**
 * The secrets list cursors are signed with (HMAC-SHA256; runtime/cursor-signer.ts): the newest row
 * signs, the newest two verify, so a cursor outlives one rotation. `migrateDb` inserts the first
 * with id 1 if the table is empty; `agentline cursor-secret rotate` adds the next id and deletes
 * all but the newest two.
 */
export const cursorSecrets = sqliteTable('cursor_secrets', {
  id: integer('id').primaryKey(),
  /** 32 random bytes, base64url. */
  secret: text('secret').notNull(),
  createdAt: isoTimestamp('created_at'),
});

/**
 * The one secret the event stream's resume tokens are made with (db/repositories/resume-tokens.ts):
 * a single row, id 1, that `migrateDb` inserts if there is none. Never rotated: a token must
 * resume after any number of cursor secret rotations, and a new secret would refuse every token
 * a client holds.
 */
export const resumeTokenSecret = sqliteTable(
  'resume_token_secret',
  {
    id: integer('id').primaryKey(),
    /** 32 random bytes, base64url. */
    secret: text('secret').notNull(),
    /**
     * The highest event id when the row was stored: a decimal token (what tokens were before)
     * resumes only up to it, so decimal tokens cannot probe the ids of later events.
     */
    decimalThrough: integer('decimal_through').notNull(),
    createdAt: isoTimestamp('created_at'),
  },
  (t) => [check('resume_token_secret_one_row', sql`${t.id} = 1`)],
);

/**
 * Where an organization's messages are POSTed (the spec's webhooks tag). The API writes the
 * settings; the dispatcher (src/runtime/webhooks/) reads them and owns the rest. `event_position` and
 * `history_position`: every event (experiment history entry) of the organization with an id at or
 * below it has been handled for this endpoint, delivered or durably queued in webhook_messages;
 * they start at the organization's highest ids when the endpoint is created, only the dispatcher
 * moves them forward, and a replay moves them back. The lease says which server process serves
 * the endpoint until when; an API write that changes what it must do clears it, so the holder's
 * next conditional write finds it gone. `secret` signs; `previous_secret` signs beside it until
 * `previous_secret_expires_at`. Neither is ever selected into a wire object or a log line, but
 * by create and rotate-secret, whose answers carry the new one.
 */
export const webhookEndpoints = sqliteTable(
  'webhook_endpoints',
  {
    id: id(),
    organizationId: organizationId(),
    url: text('url').notNull(),
    description: text('description'),
    enabled: integer('enabled', { mode: 'boolean' }).notNull().default(true),
    disabledReason: text('disabled_reason'),
    searchFields: text('search_fields', { mode: 'json' }).$type<EventProperty[]>().notNull(),
    searchFieldValues: text('search_field_values', { mode: 'json' }).$type<string[]>().notNull(),
    messageTypes: text('message_types', { mode: 'json' }).$type<WebhookMessageType[]>().notNull(),
    secret: text('secret').notNull(),
    previousSecret: text('previous_secret'),
    previousSecretExpiresAt: text('previous_secret_expires_at'),
    eventPosition: integer('event_position').notNull(),
    historyPosition: integer('history_position').notNull(),
    leaseOwner: text('lease_owner'),
    leaseExpiresAt: text('lease_expires_at'),
    /** The first failed attempt since the last delivered one; null while attempts succeed. */
    failingSince: text('failing_since'),
    createdAt: isoTimestamp('created_at'),
    updatedAt: isoTimestamp('updated_at'),
  },
  (t) => [index('webhook_endpoints_organization_idx').on(t.organizationId, t.id)],
);

/**
 * Messages due a later attempt (retries, test messages), each with the body as first built so
 * every attempt sends the same bytes. `position` is the message's opaque token (null for a test
 * message).
 */
export const webhookMessages = sqliteTable(
  'webhook_messages',
  {
    id: id(),
    endpointId: integer('endpoint_id')
      .notNull()
      .references(() => webhookEndpoints.id, { onDelete: 'cascade' }),
    organizationId: organizationId(),
    webhookId: text('webhook_id').notNull(),
    type: text('type').$type<WebhookDeliveryType>().notNull(),
    position: text('position'),
    payload: text('payload').notNull(),
    /** Attempts made so far. */
    attempts: integer('attempts').notNull().default(0),
    status: text('status').$type<WebhookDeliveryStatus>().notNull().default('pending'),
    nextAttemptAt: text('next_attempt_at'),
    createdAt: isoTimestamp('created_at'),
  },
  (t) => [
    // An endpoint's due messages, soonest first; delivered and failed rows stay out of it.
    index('webhook_messages_due_idx')
      .on(t.endpointId, t.nextAttemptAt)
      .where(sql`status = 'pending'`),
    check('webhook_messages_status_check', webhookStatusCheck(t.status)),
  ],
);

/**
 * The delivery log: one row per attempt, kept 30 days. `error` is a short text (at most 256
 * characters, no secret, never the receiver's whole answer).
 */
export const webhookAttempts = sqliteTable(
  'webhook_attempts',
  {
    id: id(),
    endpointId: integer('endpoint_id')
      .notNull()
      .references(() => webhookEndpoints.id, { onDelete: 'cascade' }),
    organizationId: organizationId(),
    webhookId: text('webhook_id').notNull(),
    type: text('type').$type<WebhookDeliveryType>().notNull(),
    position: text('position'),
    /** 1 for the message's first attempt. */
    attempt: integer('attempt').notNull(),
    status: text('status').$type<WebhookDeliveryStatus>().notNull(),
    responseStatus: integer('response_status'),
    error: text('error'),
    durationMs: integer('duration_ms').notNull(),
    attemptedAt: text('attempted_at').notNull(),
    nextAttemptAt: text('next_attempt_at'),
  },
  (t) => [
    // An endpoint's log, newest first, and its count.
    index('webhook_attempts_endpoint_idx').on(t.endpointId, t.id),
    // The sweep of rows past the retention, oldest first.
    index('webhook_attempts_attempted_at_idx').on(t.attemptedAt),
    check('webhook_attempts_status_check', webhookStatusCheck(t.status)),
  ],
);
