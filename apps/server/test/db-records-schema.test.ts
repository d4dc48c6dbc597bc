// The records file format: the committed JSON Schema is the one generated from the zod schema
// `agentline load` uses, and both accept and reject the same files.

import { readFileSync } from 'node:fs';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { describe, expect, it } from 'vitest';
import { DEMO_RECORDS } from '../src/cli/demo-data.js';
import { platformRecordsSchema } from '../src/records/format.js';
import { PLATFORM_RECORDS_SCHEMA_FILE, platformRecordsSchemaText } from '../schemas/generate.js';
import { RECORDS_EXAMPLE } from './fixtures/cli-harness.js';

const committedText = readFileSync(PLATFORM_RECORDS_SCHEMA_FILE, 'utf8');
// ajv-formats is CommonJS: its default import is the plugin or a module object carrying it.
const addFormats = ((addFormatsModule as { default?: unknown }).default ?? addFormatsModule) as (
  ajv: Ajv2020,
) => Ajv2020;
const ajv = addFormats(new Ajv2020({ allErrors: true, strict: false }));
const validateWithJsonSchema = ajv.compile(JSON.parse(committedText));

describe('platform-records.schema.json', () => {
  it('is up to date with the zod schema (run "pnpm --filter @agentline/server gen:schemas")', async () => {
    expect(committedText).toBe(await platformRecordsSchemaText());
  });

  it('is a draft 2020-12 schema with an id and a description', () => {
    const schema = JSON.parse(committedText) as Record<string, unknown>;
    expect(schema.$schema).toBe('https://json-schema.org/draft/2020-12/schema');
    expect(schema.$id).toMatch(/platform-records\.schema\.json$/);
    expect(schema.description).toContain('agentline load');
  });

  it.each([
    ['the example fixture', JSON.parse(readFileSync(RECORDS_EXAMPLE, 'utf8')) as unknown],
    ['the demo records', DEMO_RECORDS],
    ['an empty file', {}],
  ])('accepts %s, as zod does', (_name, records) => {
    expect(validateWithJsonSchema(records), ajv.errorsText(validateWithJsonSchema.errors)).toBe(
      true,
    );
    expect(platformRecordsSchema.safeParse(records).success).toBe(true);
  });

  it.each([
    ['an unknown section', { agnets: [] }],
    ['an unknown field', { services: [{ name: 'a', colour: 'red' }] }],
    ['a missing name', { services: [{}] }],
    ['an empty name', { agents: [{ name: '' }] }],
    ['a reference of the wrong type', { agents: [{ name: 'a', prompt: true }] }],
    ['a non-positive id reference', { agents: [{ name: 'a', prompt: 0 }] }],
    // What PostgreSQL cannot store is refused for both backends alike.
    ['an id beyond a database integer', { agents: [{ name: 'a', prompt: 2_147_483_648 }] }],
    [
      'a version beyond a database integer',
      { agents: [{ name: 'a', pinned_prompt_version: 2 ** 31 }] },
    ],
    ['a NUL character in a name', { services: [{ name: 'bad\u0000name' }] }],
    [
      'an unknown LLM provider',
      { prompts: [{ name: 'p', llm_config: { model: 'm', provider: 'acme' } }] },
    ],
    [
      'a timestamp without a zone',
      { tools: [{ name: 't', definition: {}, last_updated: '2026-03-17T07:22:20' }] },
    ],
    ['a channel kind', { channels: [{ name: 'c', kind: 'fax' }] }],
    [
      'a phone number that is not E.164',
      { messaging_services: [{ sid: 'MG1', name: 'm', numbers: ['555-0100'] }] },
    ],
    [
      'a weight above 99',
      {
        experiments: [
          {
            name: 'e',
            target: 1,
            variants: [
              { name: 'a', weight: 100, agent: 'x' },
              { name: 'b', weight: 1, agent: 'y' },
            ],
          },
        ],
      },
    ],
    [
      'a single variant',
      {
        experiments: [{ name: 'e', target: 1, variants: [{ name: 'a', weight: 50, agent: 'x' }] }],
      },
    ],
  ])('rejects %s, as zod does', (_name, records) => {
    expect(validateWithJsonSchema(records)).toBe(false);
    expect(platformRecordsSchema.safeParse(records).success).toBe(false);
  });
});
