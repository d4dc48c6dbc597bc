// Writes a parsed records file (see format.ts) for one organization, all or
// nothing. Sections are written in dependency order, so by the time a record names another one,
// that one is in the database whether it came from this file or was there before; one lookup by
// name then serves both. Reference problems are collected rather than thrown at the first one,
// so a single run reports all of them, and then the whole transaction rolls back.

import { sql } from 'drizzle-orm';
import type { SQLiteColumn, SQLiteTable } from 'drizzle-orm/sqlite-core';
import {
  isChangeable,
  targetChangeProblems,
  targetProblems,
  type ExperimentStatus,
} from '../domain/experiments.js';
import type { Db } from '../db/engine/client.js';
import type { JsonPath, PlatformRecords, RecordReference, TargetReference } from './format.js';
import {
  execute,
  idEquals,
  insertValues,
  jsonText,
  runStepsInTransaction,
  selectList,
  selectRows,
  setValues,
  type Steps,
} from '../db/engine/portable-sql.js';
import {
  a2pBrands,
  a2pCampaigns,
  agents,
  channels,
  channelTargets,
  experiments,
  experimentVariants,
  messagingServiceNumbers,
  messagingServices,
  organizations,
  prompts,
  promptTools,
  services,
  telephonyNumbers,
  tools,
} from '../db/schema/sqlite.js';
import { readExperiment } from '../db/repositories/experiment-records.js';
import { experimentTarget } from '../db/repositories/experiments.js';
import {
  fieldChanges,
  lastUpdatedByName,
  OPERATOR,
  stateOf,
  type ExperimentState,
} from '../domain/experiment-history.js';
import { recordChange } from '../use-cases/experiment-history.js';

export interface RecordProblem {
  path: JsonPath;
  /** What is wrong and how to fix it, e.g. `no tool named "lookup" ...; add it under "tools"`. */
  message: string;
}

export class PlatformRecordsError extends Error {
  override name = 'PlatformRecordsError';
  constructor(readonly problems: RecordProblem[]) {
    super(`${problems.length} problem(s) in the platform records`);
  }
}

/** The kinds of record a load writes, in the order the loaded records are listed. */
export const LOAD_SECTIONS = [
  'services',
  'tools',
  'prompts',
  'agents',
  'channels',
  'channel_targets',
  'telephony_numbers',
  'messaging_services',
  'messaging_service_numbers',
  'a2p_brands',
  'a2p_campaigns',
  'experiments',
] as const;

export type LoadSection = (typeof LOAD_SECTIONS)[number];

/** A record the file named, as the load left it. */
export interface LoadedRecord {
  section: LoadSection;
  /**
   * What the file names it by: its name, or sid for provider records; `<channel> <target_mode>
   * <target>` for a channel target, `<channel> <number>` and `<messaging service sid> <number>`
   * for numbers.
   */
  key: string;
  /** Its database id; null for a messaging service's number, which has none (its key is its identity). */
  id: number | null;
  /** Matched records are updated in place, even when nothing about them changed. */
  action: 'created' | 'updated';
}

export type LoadSummary = Record<LoadSection, Record<LoadedRecord['action'], number>>;

export interface LoadResult {
  /** Grouped by section in LOAD_SECTIONS order, in the file's order within a section. */
  records: LoadedRecord[];
}

/** How many records of each section were created and updated. */
export function summarizeLoad(records: readonly LoadedRecord[]): LoadSummary {
  const summary = Object.fromEntries(
    LOAD_SECTIONS.map((section) => [section, { created: 0, updated: 0 }]),
  ) as LoadSummary;
  for (const { section, action } of records) summary[section][action] += 1;
  return summary;
}

/** The ids of one section's loaded records, by key. */
export function loadedIds(
  records: readonly LoadedRecord[],
  section: LoadSection,
): Record<string, number> {
  return Object.fromEntries(
    records.flatMap((record) =>
      record.section === section && record.id !== null ? [[record.key, record.id]] : [],
    ),
  );
}

/** Inserts or updates (matched by name, or by sid for provider records) everything in `records`. */
export async function loadPlatformRecords(
  db: Db,
  organizationId: number,
  records: PlatformRecords,
  now = new Date(),
): Promise<LoadResult> {
  // The loader's steps are generators (see portable-sql.ts), written once and driven
  // synchronously inside SQLite's transaction or awaited inside PostgreSQL's. Reading everything
  // first and writing afterwards would not do: a record names others written just before it from
  // the same file, whose ids exist only once they are written. Each attempt starts a new loader,
  // as PostgreSQL may run the transaction again after a conflict.
  return runStepsInTransaction(db, () =>
    new RecordsLoader(organizationId, now.toISOString()).run(records),
  );
}

type OrganizationTable = SQLiteTable & {
  id: SQLiteColumn;
  organizationId: SQLiteColumn;
};

interface Kind {
  table: OrganizationTable;
  /** The natural key records are matched by: the name, or the provider's sid. */
  keyColumn: SQLiteColumn;
  /** Singular, for messages: "tool". */
  label: string;
  /** How the key reads in messages: `named "x"`, `with sid "x"`. */
  keyWords: string;
  /** Where the file lists this kind, for "add it under ..." hints and the loaded records. */
  section: LoadSection;
}

function kind(
  table: OrganizationTable,
  keyColumn: SQLiteColumn,
  label: string,
  section: LoadSection,
): Kind {
  return {
    table,
    keyColumn,
    label,
    section,
    keyWords: keyColumn.name === 'sid' ? 'with sid' : 'named',
  };
}

const SERVICE = kind(services, services.name, 'service', 'services');
const TOOL = kind(tools, tools.name, 'tool', 'tools');
const PROMPT = kind(prompts, prompts.name, 'prompt', 'prompts');
const AGENT = kind(agents, agents.name, 'agent', 'agents');
const CHANNEL = kind(channels, channels.name, 'channel', 'channels');
const MESSAGING_SERVICE = kind(
  messagingServices,
  messagingServices.sid,
  'messaging service',
  'messaging_services',
);
const A2P_BRAND = kind(a2pBrands, a2pBrands.sid, 'A2P brand', 'a2p_brands');
const A2P_CAMPAIGN = kind(a2pCampaigns, a2pCampaigns.sid, 'A2P campaign', 'a2p_campaigns');
const EXPERIMENT = kind(experiments, experiments.name, 'experiment', 'experiments');

function* experimentState(organizationId: number, id: number): Steps<ExperimentState | null> {
  const record = yield* readExperiment(organizationId, id);
  return record && stateOf(record);
}

function isoOrDefault(value: string | undefined, fallback: string): string {
  return value === undefined ? fallback : new Date(value).toISOString();
}

class RecordsLoader {
  readonly problems: RecordProblem[] = [];
  private readonly loaded: LoadedRecord[] = [];

  constructor(
    private readonly organizationId: number,
    private readonly nowIso: string,
  ) {}

  *run(records: PlatformRecords): Steps<LoadResult> {
    yield* this.load(records);
    if (this.problems.length > 0) throw new PlatformRecordsError(this.problems);
    yield* this.update(organizations, this.organizationId, {
      recordsVersion: sql`${organizations.recordsVersion} + 1`,
    });
    const loaded = [...this.loaded].sort(
      (a, b) => LOAD_SECTIONS.indexOf(a.section) - LOAD_SECTIONS.indexOf(b.section),
    );
    return { records: loaded };
  }

  private *load(records: PlatformRecords): Steps<void> {
    for (const [index, service] of records.services.entries()) {
      yield* this.save(SERVICE, service.name, { name: service.name }, ['services', index]);
    }
    for (const [index, tool] of records.tools.entries()) {
      yield* this.saveTool(tool, ['tools', index]);
    }
    for (const [index, prompt] of records.prompts.entries()) {
      yield* this.savePrompt(prompt, ['prompts', index]);
    }
    for (const [index, agent] of records.agents.entries()) {
      const path = ['agents', index];
      yield* this.save(
        AGENT,
        agent.name,
        {
          name: agent.name,
          promptId: yield* this.resolveOptional(PROMPT, agent.prompt, [...path, 'prompt']),
          pinnedPromptVersion: agent.pinned_prompt_version,
        },
        path,
      );
    }
    for (const [index, channel] of records.channels.entries()) {
      yield* this.saveChannel(channel, ['channels', index]);
    }
    yield* this.saveMessagingServices(records.messaging_services);
    for (const [index, brand] of records.a2p_brands.entries()) {
      yield* this.save(A2P_BRAND, brand.sid, { sid: brand.sid, status: brand.status }, [
        'a2p_brands',
        index,
      ]);
    }
    for (const [index, campaign] of records.a2p_campaigns.entries()) {
      const path = ['a2p_campaigns', index];
      const messagingServiceId = yield* this.resolve(
        MESSAGING_SERVICE,
        campaign.messaging_service,
        [...path, 'messaging_service'],
      );
      const brandId = yield* this.resolve(A2P_BRAND, campaign.brand, [...path, 'brand']);
      if (messagingServiceId === null || brandId === null) continue;
      yield* this.save(
        A2P_CAMPAIGN,
        campaign.sid,
        {
          sid: campaign.sid,
          messagingServiceId,
          brandId,
          campaignStatus: campaign.campaign_status,
          isMock: campaign.is_mock,
        },
        path,
      );
    }
    for (const [index, experiment] of records.experiments.entries()) {
      yield* this.saveExperiment(experiment, ['experiments', index]);
    }
  }

  private problem(path: JsonPath, message: string): null {
    this.problems.push({ path, message });
    return null;
  }

  private *insert(table: SQLiteTable, values: Record<string, unknown>): Steps<void> {
    yield* execute(sql`INSERT INTO ${table} ${insertValues(table, [values])}`);
  }

  private *insertReturningId(
    table: OrganizationTable,
    values: Record<string, unknown>,
  ): Steps<number> {
    const [inserted] = yield* selectRows<{ id: number }>(
      sql`INSERT INTO ${table} ${insertValues(table, [values])} RETURNING ${table.id}`,
    );
    return inserted!.id;
  }

  private *update(
    table: OrganizationTable | typeof organizations,
    id: number,
    values: Record<string, unknown>,
  ): Steps<void> {
    yield* execute(sql`UPDATE ${table} SET ${setValues(table, values)} WHERE ${table.id} = ${id}`);
  }

  private *idsOf(kind: Kind, key: string | number): Steps<number[]> {
    const matches =
      typeof key === 'number' ? idEquals(kind.table.id, key) : sql`${kind.keyColumn} = ${key}`;
    const rows = yield* selectRows<{ id: number }>(
      sql`SELECT ${kind.table.id} AS id FROM ${kind.table}
          WHERE ${kind.table.organizationId} = ${this.organizationId} AND ${matches}`,
    );
    return rows.map((row) => row.id);
  }

  private *resolve(kind: Kind, reference: RecordReference, path: JsonPath): Steps<number | null> {
    const ids = yield* this.idsOf(kind, reference);
    if (ids.length === 1) return ids[0]!;
    if (typeof reference === 'number') {
      return this.problem(
        path,
        `no ${kind.label} with id ${reference} in this organization; use the name of one in this file or an existing id`,
      );
    }
    if (ids.length === 0) {
      return this.problem(
        path,
        `no ${kind.label} ${kind.keyWords} "${reference}" in this file or organization; add it under "${kind.section}"`,
      );
    }
    return this.problem(
      path,
      `${ids.length} ${kind.label} records of this organization are ${kind.keyWords} "${reference}"; refer to one by its id`,
    );
  }

  private *resolveOptional(
    kind: Kind,
    reference: RecordReference | null,
    path: JsonPath,
  ): Steps<number | null> {
    return reference === null ? null : yield* this.resolve(kind, reference, path);
  }

  /** Updates the record with this key, or inserts it; null (and a problem) if the key is ambiguous. */
  /** `createdValues` are written only when the record is new. */
  private *save(
    kind: Kind,
    key: string,
    values: Record<string, unknown>,
    path: JsonPath,
    createdValues: Record<string, unknown> = {},
  ): Steps<number | null> {
    const ids = yield* this.idsOf(kind, key);
    if (ids.length > 1) {
      return this.problem(
        path,
        `${ids.length} ${kind.label} records of this organization already have "${key}"; rename this one`,
      );
    }
    const [existingId] = ids;
    if (existingId !== undefined) {
      yield* this.update(kind.table, existingId, values);
      this.loaded.push({ section: kind.section, key, id: existingId, action: 'updated' });
      return existingId;
    }
    const id = yield* this.insertReturningId(kind.table, {
      ...values,
      ...createdValues,
      organizationId: this.organizationId,
    });
    this.loaded.push({ section: kind.section, key, id, action: 'created' });
    return id;
  }

  private *saveTool(tool: PlatformRecords['tools'][number], path: JsonPath): Steps<void> {
    yield* this.save(
      TOOL,
      tool.name,
      {
        name: tool.name,
        serviceId: yield* this.resolveOptional(SERVICE, tool.service, [...path, 'service']),
        versionNumber: tool.version_number,
        definition: jsonText(tool.definition),
        lastUpdated: isoOrDefault(tool.last_updated, this.nowIso),
        lastUpdatedBy: tool.last_updated_by,
        lastUpdatedComments: tool.last_updated_comments,
      },
      path,
    );
  }

  private *savePrompt(prompt: PlatformRecords['prompts'][number], path: JsonPath): Steps<void> {
    const toolIds: Array<number | null> = [];
    for (const [index, reference] of prompt.tools.entries()) {
      toolIds.push(yield* this.resolve(TOOL, reference, [...path, 'tools', index]));
    }
    const promptId = yield* this.save(
      PROMPT,
      prompt.name,
      {
        name: prompt.name,
        type: prompt.type,
        description: prompt.description,
        context: prompt.context,
        llmConfig: jsonText(prompt.llm_config),
        sessionEndEnabled: prompt.session_end_enabled,
        sessionEndToolId: yield* this.resolveOptional(TOOL, prompt.session_end_tool, [
          ...path,
          'session_end_tool',
        ]),
        versionNumber: prompt.version_number,
        editComments: prompt.edit_comments,
        lastUpdated: isoOrDefault(prompt.last_updated, this.nowIso),
        lastUpdatedBy: prompt.last_updated_by,
      },
      path,
    );
    if (promptId === null) return;
    yield* execute(sql`DELETE FROM ${promptTools} WHERE ${promptTools.promptId} = ${promptId}`);
    for (const toolId of new Set(toolIds)) {
      if (toolId !== null) yield* this.insert(promptTools, { promptId, toolId });
    }
  }

  private *saveChannel(channel: PlatformRecords['channels'][number], path: JsonPath): Steps<void> {
    const [existing] = yield* selectRows<{ kind: string }>(
      sql`SELECT ${channels.kind} AS kind FROM ${channels}
          WHERE ${channels.organizationId} = ${this.organizationId} AND ${channels.name} = ${channel.name}
          ORDER BY ${channels.id} LIMIT 1`,
    );
    if (existing !== undefined && existing.kind !== channel.kind) {
      this.problem(
        [...path, 'kind'],
        `channel "${channel.name}" already exists as a ${existing.kind} channel and a channel's kind cannot change; give this one another name`,
      );
      return;
    }
    const isTelephony = channel.kind === 'telephony';
    const channelId = yield* this.save(
      CHANNEL,
      channel.name,
      {
        name: channel.name,
        kind: channel.kind,
        provider: isTelephony ? (channel.provider ?? 'records') : null,
        providerConfig: jsonText(channel.provider_config),
        providerSecret: channel.provider_secret,
      },
      path,
    );
    if (channelId === null) return;

    for (const phoneNumber of channel.numbers) {
      const [existing] = yield* selectRows<{ id: number }>(
        sql`SELECT ${telephonyNumbers.id} AS id FROM ${telephonyNumbers}
            WHERE ${telephonyNumbers.channelId} = ${channelId}
              AND ${telephonyNumbers.phoneNumber} = ${phoneNumber}`,
      );
      const key = `${channel.name} ${phoneNumber}`;
      if (existing) {
        this.loaded.push({ section: 'telephony_numbers', key, id: existing.id, action: 'updated' });
        continue;
      }
      const id = yield* this.insertReturningId(telephonyNumbers, {
        organizationId: this.organizationId,
        channelId,
        phoneNumber,
      });
      this.loaded.push({ section: 'telephony_numbers', key, id, action: 'created' });
    }

    for (const [index, target] of channel.targets.entries()) {
      const values = {
        agentId: yield* this.resolveOptional(AGENT, target.agent, [
          ...path,
          'targets',
          index,
          'agent',
        ]),
        isAgentTest: target.is_agent_test,
      };
      const key = `${channel.name} ${target.target_mode} ${target.target}`;
      const [existingId] = yield* this.findTargetIds(channelId, target.target, target.target_mode);
      if (existingId !== undefined) {
        yield* this.update(channelTargets, existingId, values);
        this.loaded.push({ section: 'channel_targets', key, id: existingId, action: 'updated' });
        continue;
      }
      const id = yield* this.insertReturningId(channelTargets, {
        ...values,
        organizationId: this.organizationId,
        channelId,
        target: target.target,
        targetMode: target.target_mode,
      });
      this.loaded.push({ section: 'channel_targets', key, id, action: 'created' });
    }
  }

  private *findTargetIds(channelId: number, target: string, targetMode: string): Steps<number[]> {
    const rows = yield* selectRows<{ id: number }>(
      sql`SELECT ${channelTargets.id} AS id FROM ${channelTargets}
          WHERE ${channelTargets.channelId} = ${channelId} AND ${channelTargets.target} = ${target}
            AND ${channelTargets.targetMode} = ${targetMode}
          ORDER BY ${channelTargets.id}`,
    );
    return rows.map((row) => row.id);
  }

  private *saveMessagingServices(list: PlatformRecords['messaging_services']): Steps<void> {
    const saved: Array<{ service: (typeof list)[number]; index: number; id: number | null }> = [];
    for (const [index, service] of list.entries()) {
      const id = yield* this.save(
        MESSAGING_SERVICE,
        service.sid,
        { sid: service.sid, name: service.name },
        ['messaging_services', index],
      );
      saved.push({ service, index, id });
    }
    // Each listed service's numbers are replaced as a set. Clearing all of them first lets a
    // number move from one listed service to another within the same file.
    const previous = new Set<string>();
    for (const { id } of saved) {
      if (id === null) continue;
      const removed = yield* selectRows<{ phoneNumber: string }>(
        sql`DELETE FROM ${messagingServiceNumbers}
            WHERE ${messagingServiceNumbers.messagingServiceId} = ${id}
            RETURNING ${selectList({ phoneNumber: messagingServiceNumbers.phoneNumber })}`,
      );
      for (const { phoneNumber } of removed) previous.add(`${id} ${phoneNumber}`);
    }
    for (const { service, index, id } of saved) {
      if (id === null) continue;
      for (const [numberIndex, phoneNumber] of service.numbers.entries()) {
        const [owner] = yield* selectRows<{ sid: string }>(
          sql`SELECT ${messagingServices.sid} AS sid FROM ${messagingServiceNumbers}
              JOIN ${messagingServices}
                ON ${messagingServices.id} = ${messagingServiceNumbers.messagingServiceId}
              WHERE ${messagingServiceNumbers.organizationId} = ${this.organizationId}
                AND ${messagingServiceNumbers.phoneNumber} = ${phoneNumber}`,
        );
        if (owner) {
          this.problem(
            ['messaging_services', index, 'numbers', numberIndex],
            `${phoneNumber} already belongs to messaging service ${owner.sid} of this organization and a number belongs to one service only; list ${owner.sid} in this file without it, or drop it here`,
          );
          continue;
        }
        yield* this.insert(messagingServiceNumbers, {
          messagingServiceId: id,
          organizationId: this.organizationId,
          phoneNumber,
        });
        this.loaded.push({
          section: 'messaging_service_numbers',
          key: `${service.sid} ${phoneNumber}`,
          id: null,
          action: previous.has(`${id} ${phoneNumber}`) ? 'updated' : 'created',
        });
      }
    }
  }

  private *resolveTarget(reference: TargetReference, path: JsonPath): Steps<number | null> {
    if (typeof reference === 'number') {
      const [found] = yield* selectRows<{ id: number }>(
        sql`SELECT ${channelTargets.id} AS id FROM ${channelTargets}
            WHERE ${idEquals(channelTargets.id, reference)}
              AND ${channelTargets.organizationId} = ${this.organizationId}`,
      );
      return (
        found?.id ??
        this.problem(
          path,
          `no channel target with id ${reference} in this organization; name it by channel and target instead`,
        )
      );
    }
    const channelId = yield* this.resolve(CHANNEL, reference.channel, [...path, 'channel']);
    if (channelId === null) return null;
    const [targetId] = yield* this.findTargetIds(
      channelId,
      reference.target,
      reference.target_mode,
    );
    return (
      targetId ??
      this.problem(
        [...path, 'target'],
        `channel "${reference.channel}" has no ${reference.target_mode} target "${reference.target}"; add it under that channel's "targets"`,
      )
    );
  }

  private *saveExperiment(
    experiment: PlatformRecords['experiments'][number],
    path: JsonPath,
  ): Steps<void> {
    const targetId = yield* this.resolveTarget(experiment.target, [...path, 'target']);
    const agentIds: Array<number | null> = [];
    for (const [index, variant] of experiment.variants.entries()) {
      agentIds.push(
        yield* this.resolve(AGENT, variant.agent, [...path, 'variants', index, 'agent']),
      );
    }
    if (targetId === null) return;
    // The API's rules for a target, a replaced draft and a fixed target (domain/experiments.ts).
    const target = yield* experimentTarget(this.organizationId, targetId);
    const [existing] = yield* selectRows<{
      id: number;
      status: ExperimentStatus;
      targetId: number;
    }>(
      sql`SELECT ${selectList({
        id: experiments.id,
        status: experiments.status,
        targetId: experiments.targetId,
      })}
          FROM ${experiments}
          WHERE ${experiments.organizationId} = ${this.organizationId}
            AND ${experiments.name} = ${experiment.name}
          ORDER BY ${experiments.id} LIMIT 1`,
    );
    if (existing && !isChangeable(existing.status)) {
      this.problem(
        [...path, 'name'],
        `experiment "${experiment.name}" is ${existing.status} and only drafts can be replaced; give this one another name`,
      );
      return;
    }
    const at = [...path, 'target'].map((part) => (typeof part === 'number' ? part : String(part)));
    const problems = [
      ...targetProblems(targetId, target, at),
      ...(existing ? targetChangeProblems(existing.targetId, targetId, at) : []),
    ];
    for (const problem of problems) this.problem(problem.loc, problem.msg);
    if (problems.length > 0) return;
    const before = existing ? yield* experimentState(this.organizationId, existing.id) : null;
    const experimentId = yield* this.save(
      EXPERIMENT,
      experiment.name,
      {
        name: experiment.name,
        description: experiment.description,
        targetId,
        updatedAt: this.nowIso,
        lastUpdatedBy: lastUpdatedByName(OPERATOR),
      },
      path,
      // The load's one moment, not the database's clock at the insert, which runs later: a new
      // experiment would otherwise be updated before it was created.
      { createdAt: this.nowIso },
    );
    if (experimentId === null || agentIds.includes(null)) return;
    yield* execute(
      sql`DELETE FROM ${experimentVariants} WHERE ${experimentVariants.experimentId} = ${experimentId}`,
    );
    for (const [position, variant] of experiment.variants.entries()) {
      yield* this.insert(experimentVariants, {
        experimentId,
        position,
        name: variant.name,
        weight: variant.weight,
        isControl: variant.is_control,
        agentId: agentIds[position]!,
      });
    }
    // The operator's change goes into the history in the load's transaction, as an API change
    // does; loading a draft again unchanged is no change and leaves no entry.
    const after = yield* experimentState(this.organizationId, experimentId);
    if (before && Object.keys(fieldChanges(before, after)).length === 0) return;
    yield* recordChange(
      this.organizationId,
      experimentId,
      this.nowIso,
      before ? 'updated' : 'created',
      OPERATOR,
      before,
      after,
    );
  }
}
