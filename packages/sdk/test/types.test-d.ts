// Compile-time guarantees of the SDK's types (run by `vitest --typecheck`).

import { expectTypeOf, test } from 'vitest';
import { createClient, type components } from '../src/index.js';

const client = createClient({ apiKey: 'k' });
const variants: components['schemas']['VariantWrite'][] = [
  { name: 'control', weight: 50, agent_id: 1, is_control: true },
  { name: 'candidate', weight: 50, agent_id: 2 },
];

test('variants is required on experiment create and update', () => {
  // @ts-expect-error: variants is required (a widely used generated client wrongly marks it optional)
  void client.experiments.create({ name: 'x', target_id: 1 });
  // @ts-expect-error: variants is required on update too
  void client.experiments.update(1, { name: 'x' });
  void client.experiments.create({ name: 'x', target_id: 1, variants });
  void client.experiments.update(1, { name: 'x', variants });
});

test('wrong field types do not compile', () => {
  const stringWeights = [{ name: 'a', weight: '50', agent_id: 1 }];
  // @ts-expect-error: weight is an integer, not a string
  void client.experiments.create({ name: 'x', target_id: 1, variants: stringWeights });
  // @ts-expect-error: target_id is a number
  void client.experiments.create({ name: 'x', target_id: '1', variants });
  // @ts-expect-error: not an event property
  void client.events.list({ order_by: 'colour' });
});

test('answers are typed from the spec', () => {
  expectTypeOf(client.events.list).returns.resolves.toHaveProperty('items');
  expectTypeOf<Awaited<ReturnType<typeof client.experiments.start>>['warnings']>().toEqualTypeOf<
    string[]
  >();
  expectTypeOf<
    Awaited<ReturnType<typeof client.telephony.verifyA2pCompliance>>['a2p_approved']
  >().toEqualTypeOf<boolean>();
});
