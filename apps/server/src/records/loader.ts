// Writes a parsed records file (see format.ts) for one organization, all or
// nothing. Sections are written in dependency order, so by the time a record names another one,
// that one is in the database whether it came from this file or was there before; one lookup by
// name then serves both. Reference problems are collected rather than thrown at the first one,
// so a single run reports all of them, and then the whole transaction rolls back.

import type { Db } from '../db/engine/client.js';
import { jsonText, runStepsInTransaction, type Steps } from '../db/engine/portable-sql.js';
import { bumpRecordsVersion } from '../db/repositories/organizations.js';
import {
  channelKindNamed,
  channelTargetIds,
  channelTargetOfOrganization,
  clearMessagingServiceNumbers,
  insertChannelTarget,
  insertKeyedRecord,
  insertMessagingServiceNumber,
  insertTelephonyNumber,
  keyedRecordIds,
  messagingServiceWithNumber,
  replacePromptTools,
  telephonyNumberId,
  updateChannelTarget,
  updateKeyedRecord,
  type KeyedKind,
} from '../db/repositories/platform-records.js';
import { loadExperiment } from './experiment-load.js';
import type { JsonPath, PlatformRecords, RecordReference, TargetReference } from './format.js';
import {
  duplicateKeyMessage,
  LOAD_SECTIONS,
  PlatformRecordsError,
  type LoadedRecord,
  type LoadResult,
  type RecordProblem,
} from './load-result.js';

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

interface Kind {
  /** Where the file lists this kind, for "add it under ..." hints and the loaded records. */
  section: KeyedKind;
  /** Singular, for messages: "tool". */
  label: string;
  /** The property that keys a record of this kind: its name, or the provider's sid. */
  key: 'name' | 'sid';
}

/** How a key reads in messages: `named "x"`, `with sid "x"`. */
const KEY_WORDS = { name: 'named', sid: 'with sid' } as const;

const SERVICE: Kind = { section: 'services', label: 'service', key: 'name' };
const TOOL: Kind = { section: 'tools', label: 'tool', key: 'name' };
const PROMPT: Kind = { section: 'prompts', label: 'prompt', key: 'name' };
const AGENT: Kind = { section: 'agents', label: 'agent', key: 'name' };
const CHANNEL: Kind = { section: 'channels', label: 'channel', key: 'name' };
const MESSAGING_SERVICE: Kind = {
  section: 'messaging_services',
  label: 'messaging service',
  key: 'sid',
};
const A2P_BRAND: Kind = { section: 'a2p_brands', label: 'A2P brand', key: 'sid' };
const A2P_CAMPAIGN: Kind = {
  section: 'a2p_campaigns',
  label: 'A2P campaign',
  key: 'sid',
};

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
    yield* bumpRecordsVersion(this.organizationId);
    const loaded = [...this.loaded].sort(
      (a, b) => LOAD_SECTIONS.indexOf(a.section) - LOAD_SECTIONS.indexOf(b.section),
    );
    return { records: loaded };
  }

  private *load(records: PlatformRecords): Steps<void> {
    for (const [index, service] of records.services.entries()) {
      yield* this.save(SERVICE, service.name, {}, ['services', index]);
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
      yield* this.save(A2P_BRAND, brand.sid, { status: brand.status }, ['a2p_brands', index]);
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

  private *resolve(kind: Kind, reference: RecordReference, path: JsonPath): Steps<number | null> {
    const ids = yield* keyedRecordIds(kind.section, this.organizationId, reference);
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
        `no ${kind.label} ${KEY_WORDS[kind.key]} "${reference}" in this file or organization; add it under "${kind.section}"`,
      );
    }
    return this.problem(
      path,
      `${ids.length} ${kind.label} records of this organization are ${KEY_WORDS[kind.key]} "${reference}"; refer to one by its id`,
    );
  }

  private *resolveOptional(
    kind: Kind,
    reference: RecordReference | null,
    path: JsonPath,
  ): Steps<number | null> {
    return reference === null ? null : yield* this.resolve(kind, reference, path);
  }

  /**
   * Updates the record with this key, or inserts it; null (and a problem) if the key is ambiguous.
   * The key is written under the kind's key property, so `values` leave it out; `createdValues`
   * are written only when the record is new.
   */
  private *save(
    kind: Kind,
    key: string,
    values: Record<string, unknown>,
    path: JsonPath,
    createdValues: Record<string, unknown> = {},
  ): Steps<number | null> {
    const ids = yield* keyedRecordIds(kind.section, this.organizationId, key);
    if (ids.length > 1) {
      return this.problem(path, duplicateKeyMessage(kind.label, ids.length, key));
    }
    const keyed = { [kind.key]: key, ...values };
    const [existingId] = ids;
    if (existingId !== undefined) {
      yield* updateKeyedRecord(kind.section, existingId, keyed);
      this.loaded.push({ section: kind.section, key, id: existingId, action: 'updated' });
      return existingId;
    }
    const id = yield* insertKeyedRecord(kind.section, {
      ...keyed,
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
    yield* replacePromptTools(
      promptId,
      new Set(toolIds.filter((toolId): toolId is number => toolId !== null)),
    );
  }

  private *saveChannel(channel: PlatformRecords['channels'][number], path: JsonPath): Steps<void> {
    const existingKind = yield* channelKindNamed(this.organizationId, channel.name);
    if (existingKind !== undefined && existingKind !== channel.kind) {
      this.problem(
        [...path, 'kind'],
        `channel "${channel.name}" already exists as a ${existingKind} channel and a channel's kind cannot change; give this one another name`,
      );
      return;
    }
    const isTelephony = channel.kind === 'telephony';
    const channelId = yield* this.save(
      CHANNEL,
      channel.name,
      {
        kind: channel.kind,
        provider: isTelephony ? (channel.provider ?? 'records') : null,
        providerConfig: jsonText(channel.provider_config),
        providerSecret: channel.provider_secret,
      },
      path,
    );
    if (channelId === null) return;

    for (const phoneNumber of channel.numbers) {
      const existingId = yield* telephonyNumberId(channelId, phoneNumber);
      const key = `${channel.name} ${phoneNumber}`;
      if (existingId !== undefined) {
        this.loaded.push({ section: 'telephony_numbers', key, id: existingId, action: 'updated' });
        continue;
      }
      const id = yield* insertTelephonyNumber(this.organizationId, channelId, phoneNumber);
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
      const [existingId] = yield* channelTargetIds(channelId, target.target, target.target_mode);
      if (existingId !== undefined) {
        yield* updateChannelTarget(existingId, values);
        this.loaded.push({ section: 'channel_targets', key, id: existingId, action: 'updated' });
        continue;
      }
      const id = yield* insertChannelTarget({
        ...values,
        organizationId: this.organizationId,
        channelId,
        target: target.target,
        targetMode: target.target_mode,
      });
      this.loaded.push({ section: 'channel_targets', key, id, action: 'created' });
    }
  }

  private *saveMessagingServices(list: PlatformRecords['messaging_services']): Steps<void> {
    const saved: Array<{ service: (typeof list)[number]; index: number; id: number | null }> = [];
    for (const [index, service] of list.entries()) {
      const id = yield* this.save(MESSAGING_SERVICE, service.sid, { name: service.name }, [
        'messaging_services',
        index,
      ]);
      saved.push({ service, index, id });
    }
    // Each listed service's numbers are replaced as a set. Clearing all of them first lets a
    // number move from one listed service to another within the same file.
    const previous = new Set<string>();
    for (const { id } of saved) {
      if (id === null) continue;
      for (const phoneNumber of yield* clearMessagingServiceNumbers(id)) {
        previous.add(`${id} ${phoneNumber}`);
      }
    }
    for (const { service, index, id } of saved) {
      if (id === null) continue;
      for (const [numberIndex, phoneNumber] of service.numbers.entries()) {
        const owner = yield* messagingServiceWithNumber(this.organizationId, phoneNumber);
        if (owner !== undefined) {
          this.problem(
            ['messaging_services', index, 'numbers', numberIndex],
            `${phoneNumber} already belongs to messaging service ${owner} of this organization and a number belongs to one service only; list ${owner} in this file without it, or drop it here`,
          );
          continue;
        }
        yield* insertMessagingServiceNumber(id, this.organizationId, phoneNumber);
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
      return (
        (yield* channelTargetOfOrganization(this.organizationId, reference)) ??
        this.problem(
          path,
          `no channel target with id ${reference} in this organization; name it by channel and target instead`,
        )
      );
    }
    const channelId = yield* this.resolve(CHANNEL, reference.channel, [...path, 'channel']);
    if (channelId === null) return null;
    const [targetId] = yield* channelTargetIds(channelId, reference.target, reference.target_mode);
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
    const loaded = yield* loadExperiment(
      this.organizationId,
      this.nowIso,
      { experiment, targetId, agentIds },
      path,
    );
    if ('problems' in loaded) {
      this.problems.push(...loaded.problems);
      return;
    }
    this.loaded.push({ section: 'experiments', key: experiment.name, ...loaded });
  }
}
