// A CommonJS script that uses the packed SDK through require().
const { createClient, ConflictError } = require('@agentline/sdk');

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
  console.log(
    `cjs (Node ${process.versions.node}): experiment ${created.id} ${started.experiment.status}, second start answered ${conflict.status}`,
  );
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
