// Writes a parsed records file (see ../platform-records-format.ts) for one organization, all or
// nothing. Sections are written in dependency order, so by the time a record names another one,
// that one is in the database whether it came from this file or was there before; one lookup by
// name then serves both. Reference problems are collected rather than thrown at the first one,
// so a single run reports all of them, and then the whole transaction rolls back.

import { and, eq, sql } from 'drizzle-orm';
import type { SQLiteColumn, SQLiteTable } from 'drizzle-orm/sqlite-core';
import { withTransaction, type Db, type SqliteTransaction } from '../client.js';
import type {
  JsonPath,
  PlatformRecords,
  RecordReference,
  TargetReference,
} from '../platform-records-format.js';
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
} from '../schema.js';

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

export const LOAD_SUMMARY_SECTIONS = [
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

export type LoadSummary = Record<
  (typeof LOAD_SUMMARY_SECTIONS)[number],
  { created: number; updated: number }
>;

/** Database ids of the records the file named, by section and name (sid for provider records). */
export type LoadedIds = Record<string, Record<string, number>>;

export interface LoadResult {
  summary: LoadSummary;
  ids: LoadedIds;
}

const LOADED_BY = 'agentline load';

/** Inserts or updates (matched by name, or by sid for provider records) everything in `records`. */
export async function loadPlatformRecords(
  db: Db,
  organizationId: number,
  records: PlatformRecords,
  now = new Date(),
): Promise<LoadResult> {
  return withTransaction(db, (tx) => {
    const loader = new RecordsLoader(tx, organizationId, now.toISOString());
    loader.load(records);
    if (loader.problems.length > 0) throw new PlatformRecordsError(loader.problems);
    tx.update(organizations)
      .set({ recordsVersion: sql`${organizations.recordsVersion} + 1` })
      .where(eq(organizations.id, organizationId))
      .run();
    return { summary: loader.summary, ids: loader.ids };
  });
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
  /** Where the file lists this kind, for "add it under ..." hints and the summary. */
  section: keyof LoadSummary;
}

function kind(
  table: OrganizationTable,
  keyColumn: SQLiteColumn,
  label: string,
  section: keyof LoadSummary,
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

function emptySummary(): LoadSummary {
  return Object.fromEntries(
    LOAD_SUMMARY_SECTIONS.map((section) => [section, { created: 0, updated: 0 }]),
  ) as LoadSummary;
}

function isoOrDefault(value: string | undefined, fallback: string): string {
  return value === undefined ? fallback : new Date(value).toISOString();
}

class RecordsLoader {
  readonly problems: RecordProblem[] = [];
  readonly summary = emptySummary();
  readonly ids: LoadedIds = {};

  constructor(
    private readonly tx: SqliteTransaction,
    private readonly organizationId: number,
    private readonly nowIso: string,
  ) {}

  load(records: PlatformRecords): void {
    records.services.forEach((service, index) => {
      this.save(SERVICE, service.name, { name: service.name }, ['services', index]);
    });
    records.tools.forEach((tool, index) => this.saveTool(tool, ['tools', index]));
    records.prompts.forEach((prompt, index) => this.savePrompt(prompt, ['prompts', index]));
    records.agents.forEach((agent, index) => {
      const path = ['agents', index];
      this.save(
        AGENT,
        agent.name,
        {
          name: agent.name,
          promptId: this.resolveOptional(PROMPT, agent.prompt, [...path, 'prompt']),
          pinnedPromptVersion: agent.pinned_prompt_version,
        },
        path,
      );
    });
    records.channels.forEach((channel, index) => this.saveChannel(channel, ['channels', index]));
    this.saveMessagingServices(records.messaging_services);
    records.a2p_brands.forEach((brand, index) => {
      this.save(A2P_BRAND, brand.sid, { sid: brand.sid, status: brand.status }, [
        'a2p_brands',
        index,
      ]);
    });
    records.a2p_campaigns.forEach((campaign, index) => {
      const path = ['a2p_campaigns', index];
      const messagingServiceId = this.resolve(MESSAGING_SERVICE, campaign.messaging_service, [
        ...path,
        'messaging_service',
      ]);
      const brandId = this.resolve(A2P_BRAND, campaign.brand, [...path, 'brand']);
      if (messagingServiceId === null || brandId === null) return;
      this.save(
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
    });
    records.experiments.forEach((experiment, index) =>
      this.saveExperiment(experiment, ['experiments', index]),
    );
  }

  private problem(path: JsonPath, message: string): null {
    this.problems.push({ path, message });
    return null;
  }

  private idsOf(kind: Kind, key: string | number): number[] {
    const column = typeof key === 'number' ? kind.table.id : kind.keyColumn;
    return this.tx
      .all<{ id: number }>(
        sql`SELECT ${kind.table.id} AS id FROM ${kind.table}
            WHERE ${kind.table.organizationId} = ${this.organizationId} AND ${column} = ${key}`,
      )
      .map((row) => row.id);
  }

  private resolve(kind: Kind, reference: RecordReference, path: JsonPath): number | null {
    const ids = this.idsOf(kind, reference);
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

  private resolveOptional(
    kind: Kind,
    reference: RecordReference | null,
    path: JsonPath,
  ): number | null {
    return reference === null ? null : this.resolve(kind, reference, path);
  }

  /** Updates the record with this key, or inserts it; null (and a problem) if the key is ambiguous. */
  private save(
    kind: Kind,
    key: string,
    values: Record<string, unknown>,
    path: JsonPath,
  ): number | null {
    const ids = this.idsOf(kind, key);
    const section = this.summary[kind.section];
    if (ids.length > 1) {
      return this.problem(
        path,
        `${ids.length} ${kind.label} records of this organization already have "${key}"; rename this one`,
      );
    }
    let id = ids[0];
    if (id !== undefined) {
      this.tx.update(kind.table).set(values).where(eq(kind.table.id, id)).run();
      section.updated += 1;
    } else {
      const inserted = this.tx
        .insert(kind.table)
        .values({ ...values, organizationId: this.organizationId })
        .returning({ id: kind.table.id })
        .get() as { id: number };
      id = inserted.id;
      section.created += 1;
    }
    (this.ids[kind.section] ??= {})[key] = id;
    return id;
  }

  private saveTool(tool: PlatformRecords['tools'][number], path: JsonPath): void {
    this.save(
      TOOL,
      tool.name,
      {
        name: tool.name,
        serviceId: this.resolveOptional(SERVICE, tool.service, [...path, 'service']),
        versionNumber: tool.version_number,
        definition: tool.definition,
        lastUpdated: isoOrDefault(tool.last_updated, this.nowIso),
        lastUpdatedBy: tool.last_updated_by,
        lastUpdatedComments: tool.last_updated_comments,
      },
      path,
    );
  }

  private savePrompt(prompt: PlatformRecords['prompts'][number], path: JsonPath): void {
    const toolIds = prompt.tools.map((reference, index) =>
      this.resolve(TOOL, reference, [...path, 'tools', index]),
    );
    const promptId = this.save(
      PROMPT,
      prompt.name,
      {
        name: prompt.name,
        type: prompt.type,
        description: prompt.description,
        context: prompt.context,
        llmConfig: prompt.llm_config,
        sessionEndEnabled: prompt.session_end_enabled,
        sessionEndToolId: this.resolveOptional(TOOL, prompt.session_end_tool, [
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
    this.tx.delete(promptTools).where(eq(promptTools.promptId, promptId)).run();
    for (const toolId of new Set(toolIds)) {
      if (toolId !== null) this.tx.insert(promptTools).values({ promptId, toolId }).run();
    }
  }

  private saveChannel(channel: PlatformRecords['channels'][number], path: JsonPath): void {
    const existingKind = this.tx
      .select({ kind: channels.kind })
      .from(channels)
      .where(and(eq(channels.organizationId, this.organizationId), eq(channels.name, channel.name)))
      .get()?.kind;
    if (existingKind !== undefined && existingKind !== channel.kind) {
      this.problem(
        [...path, 'kind'],
        `channel "${channel.name}" already exists as a ${existingKind} channel and a channel's kind cannot change; give this one another name`,
      );
      return;
    }
    const isTelephony = channel.kind === 'telephony';
    const channelId = this.save(
      CHANNEL,
      channel.name,
      {
        name: channel.name,
        kind: channel.kind,
        provider: isTelephony ? (channel.provider ?? 'records') : null,
        providerConfig: channel.provider_config,
        providerSecret: channel.provider_secret,
      },
      path,
    );
    if (channelId === null) return;

    for (const phoneNumber of channel.numbers) {
      const { changes } = this.tx
        .insert(telephonyNumbers)
        .values({ organizationId: this.organizationId, channelId, phoneNumber })
        .onConflictDoNothing()
        .run();
      this.summary.telephony_numbers[changes > 0 ? 'created' : 'updated'] += 1;
    }

    channel.targets.forEach((target, index) => {
      const values = {
        agentId: this.resolveOptional(AGENT, target.agent, [...path, 'targets', index, 'agent']),
        isAgentTest: target.is_agent_test,
      };
      const existing = this.findTargetIds(channelId, target.target, target.target_mode)[0];
      if (existing !== undefined) {
        this.tx.update(channelTargets).set(values).where(eq(channelTargets.id, existing)).run();
        this.summary.channel_targets.updated += 1;
      } else {
        this.tx
          .insert(channelTargets)
          .values({
            ...values,
            organizationId: this.organizationId,
            channelId,
            target: target.target,
            targetMode: target.target_mode,
          })
          .run();
        this.summary.channel_targets.created += 1;
      }
    });
  }

  private findTargetIds(channelId: number, target: string, targetMode: string): number[] {
    return this.tx
      .select({ id: channelTargets.id })
      .from(channelTargets)
      .where(
        and(
          eq(channelTargets.channelId, channelId),
          eq(channelTargets.target, target),
          eq(channelTargets.targetMode, targetMode),
        ),
      )
      .all()
      .map((row) => row.id);
  }

  private saveMessagingServices(list: PlatformRecords['messaging_services']): void {
    const saved = list.map((service, index) => ({
      service,
      index,
      id: this.save(MESSAGING_SERVICE, service.sid, { sid: service.sid, name: service.name }, [
        'messaging_services',
        index,
      ]),
    }));
    // Each listed service's numbers are replaced as a set. Clearing all of them first lets a
    // number move from one listed service to another within the same file.
    const previous = new Set<string>();
    for (const { id } of saved) {
      if (id === null) continue;
      const removed = this.tx
        .delete(messagingServiceNumbers)
        .where(eq(messagingServiceNumbers.messagingServiceId, id))
        .returning({ phoneNumber: messagingServiceNumbers.phoneNumber })
        .all();
      for (const { phoneNumber } of removed) previous.add(`${id} ${phoneNumber}`);
    }
    for (const { service, index, id } of saved) {
      if (id === null) continue;
      service.numbers.forEach((phoneNumber, numberIndex) => {
        const owner = this.tx
          .select({ sid: messagingServices.sid })
          .from(messagingServiceNumbers)
          .innerJoin(
            messagingServices,
            eq(messagingServices.id, messagingServiceNumbers.messagingServiceId),
          )
          .where(
            and(
              eq(messagingServiceNumbers.organizationId, this.organizationId),
              eq(messagingServiceNumbers.phoneNumber, phoneNumber),
            ),
          )
          .get();
        if (owner) {
          this.problem(
            ['messaging_services', index, 'numbers', numberIndex],
            `${phoneNumber} already belongs to messaging service ${owner.sid} of this organization and a number belongs to one service only; list ${owner.sid} in this file without it, or drop it here`,
          );
          return;
        }
        this.tx
          .insert(messagingServiceNumbers)
          .values({ messagingServiceId: id, organizationId: this.organizationId, phoneNumber })
          .run();
        this.summary.messaging_service_numbers[
          previous.has(`${id} ${phoneNumber}`) ? 'updated' : 'created'
        ] += 1;
      });
    }
  }

  private resolveTarget(reference: TargetReference, path: JsonPath): number | null {
    if (typeof reference === 'number') {
      const found = this.tx
        .select({ id: channelTargets.id })
        .from(channelTargets)
        .where(
          and(
            eq(channelTargets.id, reference),
            eq(channelTargets.organizationId, this.organizationId),
          ),
        )
        .get();
      return (
        found?.id ??
        this.problem(
          path,
          `no channel target with id ${reference} in this organization; name it by channel and target instead`,
        )
      );
    }
    const channelId = this.resolve(CHANNEL, reference.channel, [...path, 'channel']);
    if (channelId === null) return null;
    const [targetId] = this.findTargetIds(channelId, reference.target, reference.target_mode);
    return (
      targetId ??
      this.problem(
        [...path, 'target'],
        `channel "${reference.channel}" has no ${reference.target_mode} target "${reference.target}"; add it under that channel's "targets"`,
      )
    );
  }

  private saveExperiment(experiment: PlatformRecords['experiments'][number], path: JsonPath): void {
    const targetId = this.resolveTarget(experiment.target, [...path, 'target']);
    const agentIds = experiment.variants.map((variant, index) =>
      this.resolve(AGENT, variant.agent, [...path, 'variants', index, 'agent']),
    );
    if (targetId === null) return;
    const target = this.tx
      .select({ isAgentTest: channelTargets.isAgentTest })
      .from(channelTargets)
      .where(eq(channelTargets.id, targetId))
      .get();
    if (target?.isAgentTest) {
      this.problem(
        [...path, 'target'],
        'this is a built-in agent-test target and experiments cannot run on it; pick another target',
      );
      return;
    }
    const existing = this.tx
      .select({ status: experiments.status, targetId: experiments.targetId })
      .from(experiments)
      .where(
        and(
          eq(experiments.organizationId, this.organizationId),
          eq(experiments.name, experiment.name),
        ),
      )
      .get();
    if (existing && existing.status !== 'draft') {
      this.problem(
        [...path, 'name'],
        `experiment "${experiment.name}" is ${existing.status} and only drafts can be replaced; give this one another name`,
      );
      return;
    }
    if (existing && existing.targetId !== targetId) {
      this.problem(
        [...path, 'target'],
        `experiment "${experiment.name}" exists with another target and a target cannot change; keep its target or give this one another name`,
      );
      return;
    }
    const experimentId = this.save(
      EXPERIMENT,
      experiment.name,
      {
        name: experiment.name,
        description: experiment.description,
        targetId,
        updatedAt: this.nowIso,
        lastUpdatedBy: LOADED_BY,
      },
      path,
    );
    if (experimentId === null || agentIds.includes(null)) return;
    this.tx
      .delete(experimentVariants)
      .where(eq(experimentVariants.experimentId, experimentId))
      .run();
    experiment.variants.forEach((variant, position) => {
      this.tx
        .insert(experimentVariants)
        .values({
          experimentId,
          position,
          name: variant.name,
          weight: variant.weight,
          isControl: variant.is_control,
          agentId: agentIds[position]!,
        })
        .run();
    });
  }
}
