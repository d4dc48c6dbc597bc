// Type-checked against the packed SDK's declarations (tsc --noEmit, NodeNext, strict).
import { createClient, type components } from '@agentline/sdk';

const client = createClient({ apiKey: 'agl_x', baseUrl: 'http://127.0.0.1:8080' });
type VariantWrite = components['schemas']['VariantWrite'];
const variants: VariantWrite[] = [
  { name: 'control', weight: 50, is_control: true, agent_id: 1 },
  { name: 'candidate', weight: 50, agent_id: 2 },
];

export async function typed(): Promise<string[]> {
  const created = await client.experiments.create({ name: 'typed', target_id: 1, variants });
  // @ts-expect-error: variants is required on create
  await client.experiments.create({ name: 'typed', target_id: 1 });
  const started = await client.experiments.start(created.id);
  const status: 'draft' | 'running' | 'stopped' = started.experiment.status;
  return [status, ...started.warnings];
}
