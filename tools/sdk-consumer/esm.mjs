// An ES module that uses the packed SDK the way a customer would.
import { createClient, NotFoundError } from '@agentline/sdk';

const client = createClient(); // AGENTLINE_API_KEY and AGENTLINE_BASE_URL from the environment
const events = await client.events.list({ limit: 5 });
if (events.items.length !== 5) throw new Error(`expected 5 events, got ${events.items.length}`);

const [draft] = (
  await client.experiments.list({ search_fields: ['status'], search_field_values: ['draft'] })
).items;
const created = await client.experiments.create({
  name: 'ESM consumer',
  target_id: draft.target_id,
  variants: draft.variants.map(({ name, weight, is_control, agent_id }) => ({
    name,
    weight,
    is_control,
    agent_id,
  })),
});
const started = await client.experiments.start(created.id);
await client.experiments.stop(created.id);
const missing = await client.experiments.get(999999).catch((error) => error);
if (!(missing instanceof NotFoundError)) throw new Error('expected a NotFoundError');
console.log(
  `esm: ${events.total_count} events, experiment ${created.id} ${started.experiment.status} with ${started.warnings.length} warning(s)`,
);
