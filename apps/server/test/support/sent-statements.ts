// The statements a PostgreSQL pool's connections send, for tests that hold a code path to the
// round trips it costs or the statements it must not send.

import type pg from 'pg';

/** Records the text of every statement the pool's connections send from now on, in order. */
export function recordStatements(pool: pg.Pool): string[] {
  const sent: string[] = [];
  const recorded = new WeakSet<pg.PoolClient>();
  pool.on('acquire', (client: pg.PoolClient) => {
    if (recorded.has(client)) return;
    recorded.add(client);
    const query = client.query.bind(client) as (...args: unknown[]) => unknown;
    (client as unknown as { query: (...args: unknown[]) => unknown }).query = (...args) => {
      const [statement] = args as [string | { text: string }];
      sent.push(typeof statement === 'string' ? statement : statement.text);
      return query(...args);
    };
  });
  return sent;
}
