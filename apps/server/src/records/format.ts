// The file format of `agentline load`: the platform records of one organization. This zod schema
// is the single definition; schemas/platform-records.schema.json is generated from it (a test
// keeps the two equal) so editors can validate files as people write them.
//
// Records point at each other by name (by `sid` for provider records), never by database id,
// although an integer id of an existing record of the organization is accepted too. Loading is
// an upsert keyed by those names: loading a file again updates what it names.

import { z } from 'zod';
import { everyValueOf } from '../vocabulary/spec-enums.js';
import { variantSetProblems } from '../domain/experiments.js';
import type { components } from '../spec-types.js';
import { CHANNEL_KINDS, TELEPHONY_PROVIDERS } from '../db/schema/sqlite.js';

const REFERENCE_HELP =
  'The name of a record of that kind in this file or already in the organization, or the integer id of an existing one.';

// Both limits are the databases': PostgreSQL's integer columns end at 2^31 - 1, and its text
// cannot hold U+0000, so a file either backend would refuse is refused here, with the path.
const MAX_DATABASE_INTEGER = 2_147_483_647;
const positiveInt = () => z.int().positive().max(MAX_DATABASE_INTEGER);
// eslint-disable-next-line no-control-regex -- NUL is exactly the character refused here.
const text = () => z.string().regex(/^[^\u0000]*$/, 'must not contain the NUL character (U+0000)');

const name = text().min(1).max(200);
const reference = z.union([text().min(1), positiveInt()]).describe(REFERENCE_HELP);
const optionalText = text().nullable().default(null);
const isoDateTime = z.iso
  .datetime({ offset: true })
  .describe('ISO 8601 date-time with seconds and `Z` or an offset, e.g. 2026-03-17T07:22:20.252Z');
const e164 = z
  .string()
  .regex(/^\+[1-9][0-9]{1,14}$/, 'must be an E.164 phone number such as +14155550100');

const service = z.strictObject({ name });

const toolParameter = z.looseObject({
  type: text().optional(),
  description: text().optional(),
  default: z.unknown().optional(),
});

// Loose on purpose: definitions with mistakes (a relative url, a required parameter that is not
// declared) must load, because reporting them as validation issues is the point.
const toolDefinition = z
  .looseObject({
    type: text().optional().describe('Tool kind, e.g. `endpoint`.'),
    endpoint: z
      .looseObject({
        argument_location: text().optional(),
        method: text().optional(),
        url: text().optional(),
      })
      .optional(),
    static_parameters: z
      .array(
        z.looseObject({
          name: text(),
          type: text().optional(),
          description: text().optional(),
          required: z.boolean().optional(),
          default: z.unknown().optional(),
        }),
      )
      .optional(),
    tool: z
      .looseObject({
        type: text().optional(),
        function: z
          .looseObject({
            name: text().optional(),
            description: text().optional(),
            parameters: z
              .looseObject({
                type: text().optional(),
                properties: z.record(text(), toolParameter).optional(),
                required: z.array(text()).optional(),
              })
              .optional(),
          })
          .optional(),
      })
      .optional(),
  })
  .describe(
    'The tool definition as the platform stores it (the tool definition of the interface).',
  );

const tool = z.strictObject({
  name,
  service: reference.nullable().default(null).describe(`The tool's service. ${REFERENCE_HELP}`),
  version_number: positiveInt().default(1),
  definition: toolDefinition,
  last_updated: isoDateTime.optional().describe('Defaults to the time of loading.'),
  last_updated_by: text().min(1).default('agentline load'),
  last_updated_comments: optionalText,
});

export const LLM_PROVIDERS = everyValueOf<components['schemas']['LlmConfig']['provider']>()([
  'openai',
  'azure_openai',
  'anthropic',
  'google',
]);

const prompt = z.strictObject({
  name,
  type: text().min(1).default('prompt_v1'),
  description: optionalText,
  context: optionalText.describe('The instruction text given to the LLM.'),
  llm_config: z.strictObject({
    model: text().min(1),
    provider: z.enum(LLM_PROVIDERS),
    version: optionalText,
  }),
  tools: z.array(reference).default([]).describe(`The prompt's tools. ${REFERENCE_HELP}`),
  session_end_enabled: z.boolean().default(false),
  session_end_tool: reference.nullable().default(null).describe(`A tool. ${REFERENCE_HELP}`),
  version_number: positiveInt().default(1),
  edit_comments: optionalText,
  last_updated: isoDateTime.optional().describe('Defaults to the time of loading.'),
  last_updated_by: optionalText,
});

const agent = z.strictObject({
  name,
  prompt: reference.nullable().default(null).describe(`The agent's prompt. ${REFERENCE_HELP}`),
  pinned_prompt_version: positiveInt()
    .nullable()
    .default(null)
    .describe('The prompt version the agent is pinned to; null follows the latest.'),
});

const channelTarget = z.strictObject({
  target: text().min(1).describe('Phone number or handle that traffic arrives on.'),
  target_mode: text().min(1).default('inbound'),
  agent: reference
    .nullable()
    .default(null)
    .describe(`The agent that answers when no experiment runs. ${REFERENCE_HELP}`),
  is_agent_test: z
    .boolean()
    .default(false)
    .describe('A built-in agent-test target; experiments cannot use it.'),
});

const channel = z
  .strictObject({
    name,
    kind: z.enum(CHANNEL_KINDS),
    provider: z
      .enum(TELEPHONY_PROVIDERS)
      .nullable()
      .default(null)
      .describe(
        'Telephony only. `records` (the default) answers the A2P check from the provider records in this database; `twilio` reads the Twilio REST API and needs provider_config.account_sid and provider_secret.',
      ),
    provider_config: z
      .looseObject({
        account_sid: text().min(1).optional(),
        api_base_url: z.url().optional(),
        messaging_base_url: z.url().optional(),
        timeout_ms: positiveInt().optional(),
      })
      .nullable()
      .default(null)
      .describe(
        'Provider settings (never secret), e.g. for twilio: account_sid, base urls, timeout_ms.',
      ),
    provider_secret: z
      .string()
      .min(1)
      .nullable()
      .default(null)
      .describe('Provider credential (the twilio auth token). Stored, never returned or logged.'),
    numbers: z
      .array(e164)
      .default([])
      .describe('Telephony only: incoming numbers of the channel, in E.164.'),
    targets: z.array(channelTarget).default([]),
  })
  .describe('A channel with its numbers and targets. Numbers and targets not listed are kept.');

const messagingService = z.strictObject({
  sid: text().min(1),
  name,
  numbers: z
    .array(e164)
    .default([])
    .describe('The numbers of the service; this list replaces the stored one.'),
});

const a2pBrand = z.strictObject({
  sid: text().min(1),
  status: text().min(1).describe('Provider status, e.g. APPROVED, PENDING, FAILED.'),
});

const a2pCampaign = z.strictObject({
  sid: text().min(1),
  messaging_service: text().min(1).describe('The `sid` of a messaging service.'),
  brand: text().min(1).describe('The `sid` of an A2P brand.'),
  campaign_status: text().min(1).describe('Provider status, e.g. VERIFIED, PENDING, FAILED.'),
  is_mock: z.boolean().default(false),
});

const targetReference = z
  .union([
    positiveInt(),
    z.strictObject({
      channel: reference,
      target: text().min(1),
      target_mode: text().min(1).default('inbound'),
    }),
  ])
  .describe('A channel target: its id, or its channel (name or id), target and target_mode.');

const experimentVariant = z.strictObject({
  name,
  weight: z
    .int()
    .min(1)
    .max(99)
    .describe('Whole percentage; the weights of a variant set total 100.'),
  is_control: z.boolean().default(false),
  agent: reference,
});

const experiment = z
  .strictObject({
    name,
    description: optionalText,
    target: targetReference,
    variants: z.array(experimentVariant).min(2).max(10),
  })
  .describe(
    'A draft experiment. Weights total 100, exactly one variant is the control, every variant has its own agent. An existing experiment of the same name is replaced only while it is a draft.',
  );

export type JsonPath = ReadonlyArray<PropertyKey>;

/** `prompts[2].tools[0]`: the form people use to point into a JSON file. */
export function formatJsonPath(path: JsonPath): string {
  return path
    .map((segment, index) =>
      typeof segment === 'number' ? `[${segment}]` : `${index === 0 ? '' : '.'}${String(segment)}`,
    )
    .join('');
}

function nameClashes<T>(
  items: readonly T[],
  keyOf: (item: T) => string,
): Array<{ index: number; firstIndex: number; key: string }> {
  const firstIndexByKey = new Map<string, number>();
  const clashes: Array<{ index: number; firstIndex: number; key: string }> = [];
  items.forEach((item, index) => {
    const key = keyOf(item);
    const firstIndex = firstIndexByKey.get(key);
    if (firstIndex === undefined) firstIndexByKey.set(key, index);
    else clashes.push({ index, firstIndex, key });
  });
  return clashes;
}

export const platformRecordsSchema = z
  .strictObject({
    $schema: text().optional().describe('Optional link to this JSON Schema, for editors.'),
    services: z.array(service).default([]),
    tools: z.array(tool).default([]),
    prompts: z.array(prompt).default([]),
    agents: z.array(agent).default([]),
    channels: z.array(channel).default([]),
    messaging_services: z.array(messagingService).default([]),
    a2p_brands: z.array(a2pBrand).default([]),
    a2p_campaigns: z.array(a2pCampaign).default([]),
    experiments: z.array(experiment).default([]),
  })
  .superRefine((file, ctx) => {
    const unique = <T>(
      listPath: Array<string | number>,
      items: readonly T[],
      field: string,
      keyOf: (item: T) => string,
    ) => {
      for (const clash of nameClashes(items, keyOf)) {
        ctx.addIssue({
          code: 'custom',
          path: [...listPath, clash.index, field],
          message: `"${clash.key}" is used twice (also ${formatJsonPath([...listPath, clash.firstIndex])}); give each entry its own ${field} or merge them`,
        });
      }
    };
    unique(['services'], file.services, 'name', (s) => s.name);
    unique(['tools'], file.tools, 'name', (t) => t.name);
    unique(['prompts'], file.prompts, 'name', (p) => p.name);
    unique(['agents'], file.agents, 'name', (a) => a.name);
    unique(['channels'], file.channels, 'name', (c) => c.name);
    unique(['messaging_services'], file.messaging_services, 'sid', (s) => s.sid);
    unique(['a2p_brands'], file.a2p_brands, 'sid', (b) => b.sid);
    unique(['a2p_campaigns'], file.a2p_campaigns, 'sid', (c) => c.sid);
    unique(['experiments'], file.experiments, 'name', (e) => e.name);

    const serviceOfNumber = new Map<string, string>();
    file.messaging_services.forEach((service, serviceIndex) => {
      service.numbers.forEach((number, numberIndex) => {
        const owner = serviceOfNumber.get(number);
        if (owner !== undefined && owner !== service.sid) {
          ctx.addIssue({
            code: 'custom',
            path: ['messaging_services', serviceIndex, 'numbers', numberIndex],
            message: `${number} is also listed under messaging service ${owner}; a number belongs to one messaging service only, so remove it from one of them`,
          });
        }
        serviceOfNumber.set(number, service.sid);
      });
    });

    file.channels.forEach((channel, index) => {
      const at = (field: string) => ['channels', index, field];
      if (channel.kind !== 'telephony') {
        for (const field of ['provider', 'provider_config', 'provider_secret'] as const) {
          if (channel[field] !== null) {
            ctx.addIssue({
              code: 'custom',
              path: at(field),
              message: `only telephony channels have a ${field}; remove it or set kind to "telephony"`,
            });
          }
        }
        if (channel.numbers.length > 0) {
          ctx.addIssue({
            code: 'custom',
            path: at('numbers'),
            message: 'only telephony channels have numbers; remove them or set kind to "telephony"',
          });
        }
      } else if (channel.provider === 'twilio') {
        if (!channel.provider_config?.account_sid) {
          ctx.addIssue({
            code: 'custom',
            path: at('provider_config'),
            message: 'the twilio provider needs provider_config.account_sid; add the account SID',
          });
        }
        if (channel.provider_secret === null) {
          ctx.addIssue({
            code: 'custom',
            path: at('provider_secret'),
            message: 'the twilio provider needs provider_secret (the auth token); add it',
          });
        }
      }
      unique(
        ['channels', index, 'targets'],
        channel.targets,
        'target',
        (t) => `${t.target} (${t.target_mode})`,
      );
    });

    file.experiments.forEach((experiment, index) => {
      for (const problem of variantSetProblems(experiment.variants, [
        'experiments',
        index,
        'variants',
      ])) {
        ctx.addIssue({ code: 'custom', path: problem.loc, message: problem.msg });
      }
    });
  });

/** A parsed records file, with every default applied. */
export type PlatformRecords = z.output<typeof platformRecordsSchema>;
export type RecordReference = z.output<typeof reference>;
export type TargetReference = z.output<typeof targetReference>;

/** The JSON Schema (draft 2020-12) of the records file, as committed in schemas/. */
export function platformRecordsJsonSchema(): Record<string, unknown> {
  return {
    ...z.toJSONSchema(platformRecordsSchema, { io: 'input', target: 'draft-2020-12' }),
    $id: 'https://agentline.dev/schemas/platform-records.schema.json',
    title: 'Agentline platform records',
    description:
      'Input of `agentline load <file> --org <organization>`: the services, tools, prompts, agents, channels (with their numbers and targets), provider records (messaging services, A2P brands and campaigns) and draft experiments of one organization. Records refer to each other by name (provider records by sid). Loading is all-or-nothing and updates records that already exist under the same name. Rules a JSON Schema cannot express (unique names per section, weights totalling 100, exactly one control, twilio settings) are checked by `agentline load` and described on the fields.',
  };
}
