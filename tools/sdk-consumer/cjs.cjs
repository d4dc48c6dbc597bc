// A CommonJS script that uses the packed SDK through require().
const { createClient, ConflictError } = require('@agentline/sdk');
const { verifyWebhook, WebhookVerificationError } = require('@agentline/sdk/webhooks');
const { Webhook } = require('standardwebhooks');

async function main() {
  const client = createClient({
    apiKey: process.env.AGENTLINE_API_KEY,
    baseUrl: process.env.AGENTLINE_BASE_URL,
  });
  const page = await client.events.list({
    limit: 3,
    order_by: 'timestamp',
    order_by_direction: 'asc',
  });
  if (page.items.length !== 3) throw new Error(`expected 3 events, got ${page.items.length}`);

  const [draft] = (
    await client.experiments.list({ search_fields: ['status'], search_field_values: ['draft'] })
  ).items;
  const created = await client.experiments.create({
    name: 'CommonJS consumer',
    target_id: draft.target_id,
    variants: draft.variants.map(({ name, weight, is_control, agent_id }) => ({
      name,
      weight,
      is_control,
      agent_id,
    })),
  });
  const started = await client.experiments.start(created.id);
  const conflict = await client.experiments.start(created.id).catch((error) => error);
  if (!(conflict instanceof ConflictError))
    throw new Error('expected a ConflictError on a second start');
  await client.experiments.stop(created.id);

  // The receiver's entry point through require(), without the client.
  const secret = `whsec_${Buffer.from('a secret of twenty-four bytes').toString('base64')}`;
  const body = JSON.stringify({ type: 'webhook.test', position: null, data: {} });
  const now = new Date();
  const headers = {
    'webhook-id': 'msg_cjs_consumer',
    'webhook-timestamp': String(Math.floor(now.getTime() / 1000)),
    'webhook-signature': new Webhook(secret).sign('msg_cjs_consumer', now, body),
  };
  const verified = await verifyWebhook(Buffer.from(body), headers, secret);
  if (verified.type !== 'webhook.test') throw new Error('verifyWebhook returns the body');
  const stale = await verifyWebhook(
    body,
    { ...headers, 'webhook-timestamp': String(Math.floor(now.getTime() / 1000) - 3600) },
    secret,
  ).catch((error) => error);
  if (!(stale instanceof WebhookVerificationError) || stale.reason !== 'stale_timestamp')
    throw new Error(`expected a stale_timestamp refusal, got ${stale}`);
  console.log(
    `cjs (Node ${process.versions.node}): experiment ${created.id} ${started.experiment.status}, second start answered ${conflict.status}; verifyWebhook passed a signed message and refused a stale one`,
  );
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
