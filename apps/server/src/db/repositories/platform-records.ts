// The organization's platform records as `agentline load` writes them (records/loader.ts): each
// kind matched by its natural key (a name, or the provider's sid), and the records that hang off
// them (a prompt's tools, a channel's numbers and targets, a messaging service's numbers).
// Experiments are written through experiments.ts, as the API writes them.

import { sql } from 'drizzle-orm';
import type { SQLiteColumn, SQLiteTable } from 'drizzle-orm/sqlite-core';
import {
  execute,
  idEquals,
  insertValues,
  selectList,
  selectRows,
  setValues,
  type Steps,
} from '../engine/portable-sql.js';
import {
  a2pBrands,
  a2pCampaigns,
  agents,
  channels,
  channelTargets,
  messagingServiceNumbers,
  messagingServices,
  prompts,
  promptTools,
  services,
  telephonyNumbers,
  tools,
} from '../schema/sqlite.js';

type OrganizationTable = SQLiteTable & { id: SQLiteColumn; organizationId: SQLiteColumn };

/** Each kind of keyed record, by the section of the records file that lists it. */
const KEYED = {
  services: { table: services, key: services.name },
  tools: { table: tools, key: tools.name },
  prompts: { table: prompts, key: prompts.name },
  agents: { table: agents, key: agents.name },
  channels: { table: channels, key: channels.name },
  messaging_services: { table: messagingServices, key: messagingServices.sid },
  a2p_brands: { table: a2pBrands, key: a2pBrands.sid },
  a2p_campaigns: { table: a2pCampaigns, key: a2pCampaigns.sid },
} satisfies Record<string, { table: OrganizationTable; key: SQLiteColumn }>;

export type KeyedKind = keyof typeof KEYED;

type Values = Record<string, unknown>;

function* insertReturningId(table: OrganizationTable, values: Values): Steps<number> {
  const [inserted] = yield* selectRows<{ id: number }>(
    sql`INSERT INTO ${table} ${insertValues(table, [values])} RETURNING ${table.id}`,
  );
  return inserted!.id;
}

function updateById(table: OrganizationTable, id: number, values: Values): Steps<void> {
  return execute(sql`UPDATE ${table} SET ${setValues(table, values)} WHERE ${table.id} = ${id}`);
}

/** The ids of the organization's `kind` records with this key, or this id. */
export function* keyedRecordIds(
  kind: KeyedKind,
  organizationId: number,
  key: string | number,
): Steps<number[]> {
  const { table, key: keyColumn } = KEYED[kind];
  const matches = typeof key === 'number' ? idEquals(table.id, key) : sql`${keyColumn} = ${key}`;
  const rows = yield* selectRows<{ id: number }>(
    sql`SELECT ${table.id} AS id FROM ${table}
        WHERE ${table.organizationId} = ${organizationId} AND ${matches}`,
  );
  return rows.map((row) => row.id);
}

export function insertKeyedRecord(kind: KeyedKind, values: Values): Steps<number> {
  return insertReturningId(KEYED[kind].table, values);
}

export function updateKeyedRecord(kind: KeyedKind, id: number, values: Values): Steps<void> {
  return updateById(KEYED[kind].table, id, values);
}

/** The kind of the organization's first channel named `name`, if it has one. */
export function* channelKindNamed(organizationId: number, name: string): Steps<string | undefined> {
  const [existing] = yield* selectRows<{ kind: string }>(
    sql`SELECT ${channels.kind} AS kind FROM ${channels}
        WHERE ${channels.organizationId} = ${organizationId} AND ${channels.name} = ${name}
        ORDER BY ${channels.id} LIMIT 1`,
  );
  return existing?.kind;
}

/**
 * Replaces the prompt's tools with these (each once), in one statement: the database joins their
 * names for the list once (its triggers on prompt_tools, once a statement on PostgreSQL).
 */
export function* replacePromptTools(promptId: number, toolIds: Iterable<number>): Steps<void> {
  yield* execute(sql`DELETE FROM ${promptTools} WHERE ${promptTools.promptId} = ${promptId}`);
  const links = [...toolIds].map((toolId) => ({ promptId, toolId }));
  if (links.length === 0) return;
  yield* execute(sql`INSERT INTO ${promptTools} ${insertValues(promptTools, links)}`);
}

/** The id of the channel's number `phoneNumber`, if it has it. */
export function* telephonyNumberId(
  channelId: number,
  phoneNumber: string,
): Steps<number | undefined> {
  const [existing] = yield* selectRows<{ id: number }>(
    sql`SELECT ${telephonyNumbers.id} AS id FROM ${telephonyNumbers}
        WHERE ${telephonyNumbers.channelId} = ${channelId}
          AND ${telephonyNumbers.phoneNumber} = ${phoneNumber}`,
  );
  return existing?.id;
}

export function insertTelephonyNumber(
  organizationId: number,
  channelId: number,
  phoneNumber: string,
): Steps<number> {
  return insertReturningId(telephonyNumbers, { organizationId, channelId, phoneNumber });
}

/** The ids of the channel's targets `target` in `targetMode`, oldest first. */
export function* channelTargetIds(
  channelId: number,
  target: string,
  targetMode: string,
): Steps<number[]> {
  const rows = yield* selectRows<{ id: number }>(
    sql`SELECT ${channelTargets.id} AS id FROM ${channelTargets}
        WHERE ${channelTargets.channelId} = ${channelId} AND ${channelTargets.target} = ${target}
          AND ${channelTargets.targetMode} = ${targetMode}
        ORDER BY ${channelTargets.id}`,
  );
  return rows.map((row) => row.id);
}

/** `id` if it is one of the organization's channel targets. */
export function* channelTargetOfOrganization(
  organizationId: number,
  id: number,
): Steps<number | undefined> {
  const [found] = yield* selectRows<{ id: number }>(
    sql`SELECT ${channelTargets.id} AS id FROM ${channelTargets}
        WHERE ${idEquals(channelTargets.id, id)}
          AND ${channelTargets.organizationId} = ${organizationId}`,
  );
  return found?.id;
}

export function insertChannelTarget(values: Values): Steps<number> {
  return insertReturningId(channelTargets, values);
}

export function updateChannelTarget(id: number, values: Values): Steps<void> {
  return updateById(channelTargets, id, values);
}

/** Removes every number of the messaging service; returns the numbers it had. */
export function* clearMessagingServiceNumbers(messagingServiceId: number): Steps<string[]> {
  const removed = yield* selectRows<{ phoneNumber: string }>(
    sql`DELETE FROM ${messagingServiceNumbers}
        WHERE ${messagingServiceNumbers.messagingServiceId} = ${messagingServiceId}
        RETURNING ${selectList({ phoneNumber: messagingServiceNumbers.phoneNumber })}`,
  );
  return removed.map((row) => row.phoneNumber);
}

/** The sid of the organization's messaging service that has `phoneNumber`, if one has. */
export function* messagingServiceWithNumber(
  organizationId: number,
  phoneNumber: string,
): Steps<string | undefined> {
  const [owner] = yield* selectRows<{ sid: string }>(
    sql`SELECT ${messagingServices.sid} AS sid FROM ${messagingServiceNumbers}
        JOIN ${messagingServices}
          ON ${messagingServices.id} = ${messagingServiceNumbers.messagingServiceId}
        WHERE ${messagingServiceNumbers.organizationId} = ${organizationId}
          AND ${messagingServiceNumbers.phoneNumber} = ${phoneNumber}`,
  );
  return owner?.sid;
}

export function insertMessagingServiceNumber(
  messagingServiceId: number,
  organizationId: number,
  phoneNumber: string,
): Steps<void> {
  return execute(
    sql`INSERT INTO ${messagingServiceNumbers} ${insertValues(messagingServiceNumbers, [
      { messagingServiceId, organizationId, phoneNumber },
    ])}`,
  );
}
