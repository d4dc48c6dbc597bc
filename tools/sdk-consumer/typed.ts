// Type-checked against the packed SDK's declarations (tsc --noEmit, NodeNext, strict,
// exactOptionalPropertyTypes: the strictest settings a customer may use).
import {
  ApiUserAbortError,
  createClient,
  NotFoundError,
  type Assignment,
  type Event,
  type EventListQuery,
  type Experiment,
  type ExperimentChange,
  type ExperimentCreate,
  type ExperimentListItem,
  type Prompt,
  type PostRequestOptions,
  type RateLimit,
  type VariantWrite,
  type WebhookDelivery,
  type WebhookEndpointWithSecret,
  type WithResponse,
} from '@agentline/sdk';
import {
  verifyWebhook,
  WebhookVerificationError,
  type WebhookMessage,
  type WebhookVerificationReason,
} from '@agentline/sdk/webhooks';

const client = createClient({ apiKey: 'agl_x', baseUrl: 'http://127.0.0.1:8080' });
const variants: VariantWrite[] = [
  { name: 'control', weight: 50, is_control: true, agent_id: 1 },
  { name: 'candidate', weight: 50, agent_id: 2 },
];

export async function typed(): Promise<string[]> {
  const body: ExperimentCreate = {
    name: 'typed',
    target_id: 1,
    variants,
    end_at: '2026-12-31T23:00:00Z',
    max_sessions: 10_000,
  };
  const options: PostRequestOptions = { idempotencyKey: 'k-1', timeout: 5_000, maxRetries: 1 };
  const created: Experiment = await client.experiments.create(body, options);
  // @ts-expect-error: variants is required on create
  await client.experiments.create({ name: 'typed', target_id: 1 });
  const started = await client.experiments.start(created.id);
  const status: 'draft' | 'running' | 'stopped' = started.experiment.status;
  const preview: Assignment = await client.channelTargets.assignment(1, '+14155550100');
  const share: number = (await client.experiments.results(created.id)).variants[0]!.share;
  const timeline = await client.experiments.timeline(created.id, {
    interval: 'hour',
    time_zone: 'Asia/Kolkata',
  });
  const perHour: number = timeline.buckets[0]!.variants[0]!.session_count;
  // @ts-expect-error: interval is hour or day
  await client.experiments.timeline(created.id, { interval: 'week' });
  for await (const change of client.experiments.iterateHistory(created.id)) {
    const named: ExperimentChange = change;
    const by: 'api_key' | 'operator' | 'system' = named.actor.type;
    void by;
  }

  // Items of every list assign to the named models.
  const query: EventListQuery = { limit: 10, order_by: 'timestamp' };
  const events: Event[] = (await client.events.list(query)).items;
  const prompts: Prompt[] = (await client.prompts.list()).items;
  const experiments: ExperimentListItem[] = (await client.experiments.list()).items;
  for await (const event of client.events.iterate(query, { signal: AbortSignal.timeout(1_000) })) {
    const named: Event = event;
    void named;
  }

  const answer: WithResponse<Experiment> = await client.experiments.get(created.id).withResponse();
  const requestId: string | null = answer.requestId;
  const rateLimit: RateLimit | null = answer.rateLimit;
  const left: number | undefined = rateLimit?.remaining;

  try {
    await client.experiments.get(0);
  } catch (error) {
    if (error instanceof NotFoundError) {
      const notFound: 404 = error.status;
      void notFound;
    } else if (error instanceof ApiUserAbortError) {
      void error.cause;
    }
  }
  const endpoint: WebhookEndpointWithSecret = await client.webhooks.create({
    url: 'https://hooks.example.com/agentline',
    message_types: ['experiment.status_changed'],
  });
  // @ts-expect-error: not a message type
  await client.webhooks.create({ url: 'https://hooks.example.com/x', message_types: ['session'] });
  for await (const attempt of client.webhooks.iterateDeliveries(endpoint.id, {
    status: 'failed',
  })) {
    const named: WebhookDelivery = attempt;
    const code: number | null = named.response_status;
    void code;
  }
  await client.webhooks.replay(endpoint.id, { start_datetime: '2026-11-27T00:00:00Z' });

  let reason: WebhookVerificationReason | undefined;
  try {
    const message: WebhookMessage = await verifyWebhook('{}', new Headers(), endpoint.secret);
    // The type narrows the data.
    if (message.type === 'experiment.status_changed') {
      const experimentStatus: 'draft' | 'running' | 'stopped' = message.data.status;
      void experimentStatus;
    } else if (message.type === 'event') {
      const at: string = message.data.timestamp;
      void at;
    } else {
      const none: null = message.position;
      void none;
    }
  } catch (error) {
    if (error instanceof WebhookVerificationError) reason = error.reason;
  }

  return [
    reason ?? '',
    status,
    ...started.warnings,
    String(events.length + prompts.length + experiments.length),
    String(preview.variant_id ?? share + perHour),
    requestId ?? '',
    String(left ?? ''),
  ];
}
