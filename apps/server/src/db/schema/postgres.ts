// PostgreSQL schema of Agentline: the same tables, columns and TypeScript keys as the SQLite
// schema (sqlite.ts, which explains the model), in PostgreSQL's types. Where and why they differ
// (collation, timestamps as text, json, NULLS FIRST, identity ids, the trigram index):
// docs/architecture.md, "The PostgreSQL schema".

import { sql } from 'drizzle-orm';
import {
  bigint,
  boolean,
  check,
  customType,
  doublePrecision,
  foreignKey,
  index,
  integer,
  json,
  pgTable,
  primaryKey,
  unique,
  uniqueIndex,
} from 'drizzle-orm/pg-core';
import type { Permission } from '../../vocabulary/permissions.js';
import { orderPrefix } from './order-prefix.js';
import {
  CHANNEL_KINDS,
  EXPERIMENT_STATUSES,
  experimentStatusCheck,
  TELEPHONY_PROVIDERS,
  webhookStatusCheck,
  type JsonObject,
  type LlmConfig,
} from './sqlite.js';
import type { EventProperty } from '../../vocabulary/events.js';
import type {
  WebhookDeliveryStatus,
  WebhookDeliveryType,
  WebhookMessageType,
} from '../../vocabulary/webhooks.js';

const text = customType<{ data: string }>({
  dataType: () => 'text COLLATE "C"',
});

function textEnum<const T extends readonly [string, ...string[]]>(name: string, _values: T) {
  return customType<{ data: T[number] }>({ dataType: () => 'text COLLATE "C"' })(name);
}

const CURRENT_ISO_TIMESTAMP = sql`(to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))`;

function isoTimestamp(name: string) {
  return text(name).notNull().default(CURRENT_ISO_TIMESTAMP);
}

function id() {
  return integer('id').primaryKey().generatedAlwaysAsIdentity();
}

function organizationId() {
  return integer('organization_id')
    .notNull()
    .references(() => organizations.id);
}

export const organizations = pgTable('organizations', {
  id: id(),
  name: text('name').notNull().unique(),
  createdAt: isoTimestamp('created_at'),
  recordsVersion: integer('records_version').notNull().default(0),
  eventRetentionDays: integer('event_retention_days'),
  eventsRemoved: bigint('events_removed', { mode: 'number' }).notNull().default(0),
  eventsRemovedThrough: bigint('events_removed_through', { mode: 'number' }).notNull().default(0),
});

export const roles = pgTable(
  'roles',
  {
    id: id(),
    organizationId: organizationId(),
    name: text('name').notNull(),
    permissions: json('permissions').$type<Permission[]>().notNull(),
    createdAt: isoTimestamp('created_at'),
  },
  (t) => [unique('roles_organization_name_unique').on(t.organizationId, t.name)],
);

export const apiKeys = pgTable(
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

export const services = pgTable('services', {
  id: id(),
  organizationId: organizationId(),
  name: text('name').notNull(),
  createdAt: isoTimestamp('created_at'),
});

export const tools = pgTable(
  'tools',
  {
    id: id(),
    organizationId: organizationId(),
    serviceId: integer('service_id').references(() => services.id, { onDelete: 'set null' }),
    name: text('name').notNull(),
    versionNumber: integer('version_number').notNull().default(1),
    definition: json('definition').$type<JsonObject>().notNull(),
    lastUpdated: isoTimestamp('last_updated'),
    lastUpdatedBy: text('last_updated_by').notNull(),
    lastUpdatedComments: text('last_updated_comments'),
  },
  (t) => [index('tools_organization_name_idx').on(t.organizationId, t.name)],
);

export const prompts = pgTable(
  'prompts',
  {
    id: id(),
    organizationId: organizationId(),
    name: text('name').notNull(),
    type: text('type').notNull(),
    description: text('description'),
    context: text('context'),
    llmConfig: json('llm_config').$type<LlmConfig>().notNull(),
    sessionEndEnabled: boolean('session_end_enabled').notNull().default(false),
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
    // With the id, which breaks ties in the list's order by name: without it a page by name
    // sorted each run of equal names and read every skipped row from the table for its id
    // (SQLite's indexes end with the rowid).
    index('prompts_organization_name_idx').on(t.organizationId, t.name, t.id),
    index('prompts_organization_idx').on(t.organizationId, t.id),
    // As on SQLite; llm_config is ordered by its text (spelling.jsonText).
    index('prompts_organization_llm_config_idx').on(
      t.organizationId,
      sql`((${t.llmConfig})::text COLLATE "C") NULLS FIRST`,
      t.id,
    ),
    index('prompts_organization_last_updated_idx').on(t.organizationId, t.lastUpdated, t.id),
    index('prompts_organization_last_updated_by_idx').on(
      t.organizationId,
      t.lastUpdatedBy.nullsFirst(),
      t.id,
    ),
    index('prompts_organization_session_end_idx').on(t.organizationId, t.sessionEndEnabled, t.id),
    index('prompts_organization_agent_count_idx').on(t.organizationId, t.agentCount, t.id),
    // The joined names, a description and a context may be longer than a B-tree entry holds: a
    // prefix of each, as of events' long texts.
    index('prompts_organization_tool_names_idx').on(
      t.organizationId,
      sql`${orderPrefix(t.toolNames)} NULLS FIRST`,
      t.id,
    ),
    index('prompts_organization_description_idx').on(
      t.organizationId,
      sql`${orderPrefix(t.description)} NULLS FIRST`,
      t.id,
    ),
    index('prompts_organization_context_idx').on(
      t.organizationId,
      sql`${orderPrefix(t.context)} NULLS FIRST`,
      t.id,
    ),
  ],
);

export const promptTools = pgTable(
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
    index('prompt_tools_tool_idx').on(t.toolId, t.promptId),
  ],
);

export const agents = pgTable(
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
    index('agents_prompt_idx').on(t.promptId, t.organizationId),
  ],
);

export const channels = pgTable(
  'channels',
  {
    id: id(),
    organizationId: organizationId(),
    name: text('name').notNull(),
    kind: textEnum('kind', CHANNEL_KINDS).notNull(),
    provider: textEnum('provider', TELEPHONY_PROVIDERS),
    providerConfig: json('provider_config').$type<JsonObject>(),
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

export const channelTargets = pgTable(
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
    isAgentTest: boolean('is_agent_test').notNull().default(false),
  },
  (t) => [index('channel_targets_channel_idx').on(t.channelId, t.target)],
);

export const telephonyNumbers = pgTable(
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

export const messagingServices = pgTable(
  'messaging_services',
  {
    id: id(),
    organizationId: organizationId(),
    sid: text('sid').notNull(),
    name: text('name').notNull(),
  },
  (t) => [
    unique('messaging_services_organization_sid_unique').on(t.organizationId, t.sid),
    unique('messaging_services_id_organization_unique').on(t.id, t.organizationId),
  ],
);

export const messagingServiceNumbers = pgTable(
  'messaging_service_numbers',
  {
    messagingServiceId: integer('messaging_service_id').notNull(),
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

export const a2pBrands = pgTable(
  'a2p_brands',
  {
    id: id(),
    organizationId: organizationId(),
    sid: text('sid').notNull(),
    status: text('status').notNull(),
  },
  (t) => [unique('a2p_brands_organization_sid_unique').on(t.organizationId, t.sid)],
);

export const a2pCampaigns = pgTable(
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
    isMock: boolean('is_mock').notNull().default(false),
  },
  (t) => [
    unique('a2p_campaigns_organization_sid_unique').on(t.organizationId, t.sid),
    index('a2p_campaigns_messaging_service_idx').on(t.messagingServiceId),
  ],
);

export const sessions = pgTable(
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
 * sessions by a trigger on their insert (migration 0008): the results and their timeline add these up
 * instead of counting a million sessions. A row per writer (PostgreSQL's backend process id; 0 on
 * SQLite, which has one writer): concurrent routing transactions never update the same row, so
 * counting adds no wait and no serialization failure to routing. Every zone's offset is a
 * multiple of 15 minutes, so an hour or day bucket of any zone is whole quarter hours.
 */
export const experimentSessionCounts = pgTable(
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

export const events = pgTable(
  'events',
  {
    // Not an identity: the trigger of migration 0003 takes the organization's write turn, then
    // assigns the id, so one organization's events commit in id order (see repositories/events.ts).
    // The key is (id, timestamp): the table is partitioned by timestamp (migration 0014), and
    // PostgreSQL requires the partition key in every unique index; the id alone stays unique,
    // drawn from one sequence.
    id: bigint('id', { mode: 'number' })
      .notNull()
      .default(sql`nextval('events_id_seq')`),
    organizationId: organizationId(),
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
    attributes: json('attributes').$type<JsonObject>(),
  },
  (t) => [
    primaryKey({ columns: [t.id, t.timestamp] }),
    // The timestamp first, as on SQLite (schema/sqlite.ts says why).
    uniqueIndex('events_organization_import_key_unique')
      .on(t.organizationId, t.timestamp, t.importKey)
      .where(sql`import_key IS NOT NULL`),
    // Every list index ends with id, the list's tie-breaker, so each serves ORDER BY column, id
    // in both directions without a sort (PostgreSQL has no implicit rowid suffix); NULLs first
    // as on SQLite.
    index('events_organization_timestamp_idx').on(t.organizationId, t.timestamp, t.id),
    // The organization's highest event id, which its cached counts are checked against.
    index('events_organization_id_idx').on(t.organizationId, t.id),
    index('events_organization_session_idx').on(t.organizationId, t.sessionId.nullsFirst(), t.id),
    index('events_organization_conversation_idx').on(
      t.organizationId,
      t.conversationId.nullsFirst(),
      t.id,
    ),
    index('events_organization_user_idx').on(t.organizationId, t.userId.nullsFirst(), t.id),
    index('events_organization_category_idx').on(t.organizationId, t.category.nullsFirst(), t.id),
    index('events_organization_type_idx').on(t.organizationId, t.type.nullsFirst(), t.id),
    // Every order has its index (on SQLite all but attributes). A description or attributes may
    // be longer than a B-tree entry holds: theirs hold a prefix, which the order reads first
    // (repositories/event-conditions.ts, eventOrderColumns).
    index('events_organization_source_idx').on(t.organizationId, t.source.nullsFirst(), t.id),
    index('events_organization_source_id_idx').on(t.organizationId, t.sourceId.nullsFirst(), t.id),
    index('events_organization_description_idx').on(
      t.organizationId,
      sql`${orderPrefix(sql`(${t.description} COLLATE "C")`)} NULLS FIRST`,
      t.id,
    ),
    index('events_organization_attributes_idx').on(
      t.organizationId,
      sql`${orderPrefix(sql`((${t.attributes})::text COLLATE "C")`)} NULLS FIRST`,
      t.id,
    ),
  ],
);

/**
 * Events per organization, hour and value of a low-cardinality property, kept in step with events
 * by statement triggers (migration 0013): the SQLite schema's eventCounts says what each row is.
 */
export const eventCounts = pgTable(
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

export const experiments = pgTable(
  'experiments',
  {
    id: id(),
    organizationId: organizationId(),
    name: text('name').notNull(),
    description: text('description'),
    targetId: integer('target_id')
      .notNull()
      .references(() => channelTargets.id),
    status: textEnum('status', EXPERIMENT_STATUSES).notNull().default('draft'),
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
    // As on SQLite.
    index('experiments_organization_name_idx').on(t.organizationId, t.name, t.id),
    index('experiments_organization_status_idx').on(t.organizationId, t.status, t.id),
    index('experiments_organization_target_idx').on(t.organizationId, t.targetId, t.id),
    index('experiments_organization_created_at_idx').on(t.organizationId, t.createdAt, t.id),
    index('experiments_organization_updated_at_idx').on(t.organizationId, t.updatedAt, t.id),
    index('experiments_organization_started_at_idx').on(
      t.organizationId,
      t.startedAt.nullsFirst(),
      t.id,
    ),
    index('experiments_organization_stopped_at_idx').on(
      t.organizationId,
      t.stoppedAt.nullsFirst(),
      t.id,
    ),
    index('experiments_organization_control_agent_idx').on(
      t.organizationId,
      t.controlAgentId.nullsFirst(),
      t.id,
    ),
    // A description may be longer than an index entry holds: its first characters are indexed,
    // as the prompts' long texts.
    index('experiments_organization_description_idx').on(
      t.organizationId,
      sql`${orderPrefix(t.description)} NULLS FIRST`,
      t.id,
    ),
    check('experiments_status_check', experimentStatusCheck(t.status)),
    uniqueIndex('experiments_one_running_per_target')
      .on(t.targetId)
      .where(sql`status = 'running'`),
  ],
);

export const experimentVariants = pgTable(
  'experiment_variants',
  {
    id: id(),
    experimentId: integer('experiment_id')
      .notNull()
      .references(() => experiments.id, { onDelete: 'cascade' }),
    position: integer('position').notNull(),
    name: text('name').notNull(),
    weight: integer('weight').notNull(),
    isControl: boolean('is_control').notNull(),
    agentId: integer('agent_id')
      .notNull()
      .references(() => agents.id),
  },
  (t) => [
    index('experiment_variants_experiment_idx').on(t.experimentId, t.position),
    // As on SQLite.
    index('experiment_variants_agent_idx').on(t.agentId, t.experimentId),
  ],
);

export const experimentChanges = pgTable(
  'experiment_changes',
  {
    id: id(),
    organizationId: organizationId(),
    experimentId: integer('experiment_id').notNull(),
    occurredAt: text('occurred_at').notNull(),
    action: text('action').notNull(),
    actorType: text('actor_type').notNull(),
    actorKeyId: text('actor_key_id'),
    actorKeyName: text('actor_key_name'),
    requestId: text('request_id'),
    changes: json('changes').$type<JsonObject>().notNull(),
  },
  (t) => [index('experiment_changes_experiment_idx').on(t.organizationId, t.experimentId, t.id)],
);

export const idempotencyKeys = pgTable(
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
export const rateLimitBudgets = pgTable('rate_limit_budgets', {
  apiKeyId: text('api_key_id').primaryKey(),
  /** Tokens left when it was last brought up to date; a fraction counts toward the next one. */
  tokens: doublePrecision('tokens').notNull(),
  /** When `tokens` was last brought up to date, in milliseconds since the epoch. */
  refilledAt: bigint('refilled_at', { mode: 'number' }).notNull(),
  /** What the last lease took: PostgreSQL's RETURNING sees only the row as it became. */
  lastLease: integer('last_lease').notNull(),
});

/**
 * The server processes on this database, each heartbeating its row (runtime/fleet-members.ts):
 * how many there are divides each key's shares of requests in progress and in line between them.
 */
export const serverProcesses = pgTable('server_processes', {
  id: text('id').primaryKey(),
  /** Milliseconds since the epoch. */
  seenAt: bigint('seen_at', { mode: 'number' }).notNull(),
});

/**
 * The event streams open in every server process, one row each, against EVENT_STREAMS_PER_KEY
 * (runtime/fleet-stream-slots.ts). A process renews its rows while their streams are open; a row it
 * did not renew (the process died) stops counting once it expires.
 */
export const eventStreamSlots = pgTable(
  'event_stream_slots',
  {
    id: text('id').primaryKey(),
    apiKeyId: text('api_key_id').notNull(),
    /** Milliseconds since the epoch. */
    expiresAt: bigint('expires_at', { mode: 'number' }).notNull(),
  },
  (t) => [index('event_stream_slots_api_key_idx').on(t.apiKeyId)],
);

export const cursorSecrets = pgTable('cursor_secrets', {
  id: integer('id').primaryKey(),
  secret: text('secret').notNull(),
  createdAt: isoTimestamp('created_at'),
});

export const resumeTokenSecret = pgTable(
  'resume_token_secret',
  {
    id: integer('id').primaryKey(),
    secret: text('secret').notNull(),
    decimalThrough: bigint('decimal_through', { mode: 'number' }).notNull(),
    createdAt: isoTimestamp('created_at'),
  },
  (t) => [check('resume_token_secret_one_row', sql`${t.id} = 1`)],
);

export const webhookEndpoints = pgTable(
  'webhook_endpoints',
  {
    id: id(),
    organizationId: organizationId(),
    url: text('url').notNull(),
    description: text('description'),
    enabled: boolean('enabled').notNull().default(true),
    disabledReason: text('disabled_reason'),
    searchFields: json('search_fields').$type<EventProperty[]>().notNull(),
    searchFieldValues: json('search_field_values').$type<string[]>().notNull(),
    messageTypes: json('message_types').$type<WebhookMessageType[]>().notNull(),
    secret: text('secret').notNull(),
    previousSecret: text('previous_secret'),
    previousSecretExpiresAt: text('previous_secret_expires_at'),
    // Event ids are bigint (events); history ids are integers (experiment_changes).
    eventPosition: bigint('event_position', { mode: 'number' }).notNull(),
    historyPosition: integer('history_position').notNull(),
    leaseOwner: text('lease_owner'),
    leaseExpiresAt: text('lease_expires_at'),
    failingSince: text('failing_since'),
    createdAt: isoTimestamp('created_at'),
    updatedAt: isoTimestamp('updated_at'),
  },
  (t) => [index('webhook_endpoints_organization_idx').on(t.organizationId, t.id)],
);

export const webhookMessages = pgTable(
  'webhook_messages',
  {
    // Bigint: the ids keep growing through the sweeps (a message or attempt row per delivery).
    id: bigint('id', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
    endpointId: integer('endpoint_id')
      .notNull()
      .references(() => webhookEndpoints.id, { onDelete: 'cascade' }),
    organizationId: organizationId(),
    webhookId: text('webhook_id').notNull(),
    type: text('type').$type<WebhookDeliveryType>().notNull(),
    position: text('position'),
    payload: text('payload').notNull(),
    attempts: integer('attempts').notNull().default(0),
    status: text('status').$type<WebhookDeliveryStatus>().notNull().default('pending'),
    nextAttemptAt: text('next_attempt_at'),
    createdAt: isoTimestamp('created_at'),
  },
  (t) => [
    index('webhook_messages_due_idx')
      .on(t.endpointId, t.nextAttemptAt)
      .where(sql`status = 'pending'`),
    check('webhook_messages_status_check', webhookStatusCheck(t.status)),
  ],
);

export const webhookAttempts = pgTable(
  'webhook_attempts',
  {
    // Bigint: the ids keep growing through the sweeps (a message or attempt row per delivery).
    id: bigint('id', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
    endpointId: integer('endpoint_id')
      .notNull()
      .references(() => webhookEndpoints.id, { onDelete: 'cascade' }),
    organizationId: organizationId(),
    webhookId: text('webhook_id').notNull(),
    type: text('type').$type<WebhookDeliveryType>().notNull(),
    position: text('position'),
    attempt: integer('attempt').notNull(),
    status: text('status').$type<WebhookDeliveryStatus>().notNull(),
    responseStatus: integer('response_status'),
    error: text('error'),
    durationMs: integer('duration_ms').notNull(),
    attemptedAt: text('attempted_at').notNull(),
    nextAttemptAt: text('next_attempt_at'),
  },
  (t) => [
    index('webhook_attempts_endpoint_idx').on(t.endpointId, t.id),
    index('webhook_attempts_attempted_at_idx').on(t.attemptedAt),
    check('webhook_attempts_status_check', webhookStatusCheck(t.status)),
  ],
);
