// What a load of platform records reports: the records it created and updated, section by
// section, or the problems that stopped it.

import type { JsonPath } from './format.js';

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

/** The problem of a record whose key `count` records of this organization already have. */
export function duplicateKeyMessage(label: string, count: number, key: string): string {
  return `${count} ${label} records of this organization already have "${key}"; rename this one`;
}
