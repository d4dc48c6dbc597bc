// How the prompts list searches, orders and projects (docs/decisions.md sections 2 and 4).

import type { components } from '../spec-types.js';
import { everyValueOf } from '../vocabulary/spec-enums.js';
import type { PromptProperty } from '../vocabulary/prompts.js';
import { keyedById, type ListResource, type NullableKeys } from './list-query.js';

export const PROMPT_LIST: ListResource<PromptProperty> = {
  name: 'prompts',
  kinds: {
    id: 'integer',
    name: 'text',
    name_exact: 'exact',
    description: 'text',
    name_description: 'text_either',
    context: 'text',
    // The `,`-joined names of the prompt's tools, as the item shows them.
    tools: 'text',
    llm_config: 'json',
    last_updated: 'datetime',
    last_updated_by: 'text',
    agent_count: 'integer',
    session_end_enabled: 'boolean',
  },
  // The item keys that are not properties of their own come with the property they belong to,
  // so a narrowed item can still carry the full tools and the session end tool.
  projects: {
    name_exact: ['name'],
    name_description: ['name', 'description'],
    tools: ['tools', 'tools_full'],
    session_end_enabled: ['session_end_enabled', 'session_end_tool_id', 'session_end_tool'],
  },
  ...keyedById(),
  nullable: everyValueOf<NullableKeys<components['schemas']['Prompt']> & PromptProperty>()([
    'description',
    'context',
    'last_updated_by',
  ]),
};

/** Whether the items of a list with this projection show any full tool object. */
export function projectionShowsTools(projection: ReadonlySet<string> | null): boolean {
  return projection === null || projection.has('tools_full') || projection.has('session_end_tool');
}

// ---- tool definitions ----------------------------------------------------------------------

type JsonRecord = Record<string, unknown>;

/** The value as a JSON object, or an empty one when it is anything else. */
export function recordAt(value: unknown): JsonRecord {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as JsonRecord)
    : {};
}

/** The value as text, or null when it is missing or not text. */
export function textAt(value: unknown): string | null {
  return typeof value === 'string' ? value : null;
}

/** The value as a list, or an empty one when it is anything else. */
export function listAt(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

type Open<T> = T & { [key: string]: unknown };

/** A tool definition with every part the interface's tool definition names; see completeToolDefinition. */
export type CompleteToolDefinition = Open<{
  type: string;
  endpoint: Open<{ argument_location: string; method: string; url: string }>;
  static_parameters: Array<
    Open<{ name: string; type: string; description: string; required: boolean }>
  >;
  tool: Open<{
    type: string;
    function: Open<{
      name: string;
      description: string;
      parameters: Open<{
        type: string;
        properties: Record<string, Open<{ type: string }>>;
        required: string[];
      }>;
    }>;
  }>;
}>;

/**
 * Tools are stored as loaded, mistakes and gaps included, because reporting those is what
 * validation issues are for. Lists and clients still get the whole shape the interface gives a tool definition:
 * a missing text is `""`, a missing flag `false`, a missing list or map empty. Keys the interface
 * does not name are kept as stored.
 */
export function completeToolDefinition(definition: unknown): CompleteToolDefinition {
  const root = recordAt(definition);
  const tool = recordAt(root['tool']);
  const fn = recordAt(tool['function']);
  const parameters = recordAt(fn['parameters']);
  return {
    ...withTexts(root, 'type'),
    endpoint: withTexts(recordAt(root['endpoint']), 'argument_location', 'method', 'url'),
    static_parameters: listAt(root['static_parameters']).map((entry) => ({
      ...withTexts(recordAt(entry), 'name', 'type', 'description'),
      required: recordAt(entry)['required'] === true,
    })),
    tool: {
      ...withTexts(tool, 'type'),
      function: {
        ...withTexts(fn, 'name', 'description'),
        parameters: {
          ...withTexts(parameters, 'type'),
          properties: Object.fromEntries(
            Object.entries(recordAt(parameters['properties'])).map(([name, property]) => [
              name,
              withTexts(recordAt(property), 'type'),
            ]),
          ),
          required: listAt(parameters['required']).filter(
            (name): name is string => typeof name === 'string',
          ),
        },
      },
    },
  };
}

/** The record with each of `keys` as text: `""` where it is missing or not text. */
function withTexts<K extends string>(record: JsonRecord, ...keys: K[]): Open<Record<K, string>> {
  const texts = Object.fromEntries(keys.map((key) => [key, textAt(record[key]) ?? '']));
  return { ...record, ...texts } as Open<Record<K, string>>;
}
