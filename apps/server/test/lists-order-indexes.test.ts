// The prompts and experiments lists' orders that have an index are read from it, on both
// databases: a page of such an order, in either direction, reads its rows in order and stops at
// the page's end, where an order without one sorted all the organization's rows first
// (docs/benchmarks.md, "Every shape of the prompts and experiments lists"); a long text, through
// its indexed prefix on PostgreSQL, sorting only the rows whose prefixes tie (near the start, the
// rows without the text, which all tie, are read apart in id order). The experiments'
// agent_id search starts from the agent's variants, and several intersect before any seek, as the
// prompts' tools searches do; on SQLite the prompts' name_description search tests each of its
// columns in that column's index, as a second substring search does; on PostgreSQL a substring
// search of a name, description, context or editor reads through its pg_trgm index.

import assert from 'node:assert';
import { sql, type SQL, type SQLWrapper } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../src/db/engine/client.js';
import { listWhere, tableOrder } from '../src/db/engine/list-table.js';
import { experimentsList } from '../src/db/repositories/experiments.js';
import { createOrganization } from '../src/db/repositories/organizations.js';
import { listPrompts, promptsList } from '../src/db/repositories/prompts.js';
import { experiments, prompts } from '../src/db/schema/sqlite.js';
import { PROMPT_LIST } from '../src/domain/prompts.js';
import { expectFirstWithoutText, orderPlans, planText } from './support/order-plans.js';
import { onPostgres, queryTestDb } from './support/test-database.js';

const plans = orderPlans();

/** Each indexed order: the list's property, its table and what the list orders it by. */
const INDEXED: Array<[string, 'prompts' | 'experiments', (db: Db) => SQLWrapper]> = [
  ['id', 'prompts', () => prompts.id],
  ['name', 'prompts', () => prompts.name],
  ['llm_config', 'prompts', (db) => db.spelling.jsonText(prompts.llmConfig)],
  ['last_updated', 'prompts', () => prompts.lastUpdated],
  ['last_updated_by', 'prompts', () => prompts.lastUpdatedBy],
  ['session_end_enabled', 'prompts', () => prompts.sessionEndEnabled],
  ['agent_count', 'prompts', () => prompts.agentCount],
  ['id', 'experiments', () => experiments.id],
  ['name', 'experiments', () => experiments.name],
  ['status', 'experiments', () => experiments.status],
  ['target_id', 'experiments', () => experiments.targetId],
  ['created_at', 'experiments', () => experiments.createdAt],
  ['updated_at', 'experiments', () => experiments.updatedAt],
  ['started_at', 'experiments', () => experiments.startedAt],
  ['stopped_at', 'experiments', () => experiments.stoppedAt],
  ['agent_id', 'experiments', () => experiments.controlAgentId],
];

describe('every indexed order of the prompts and experiments lists', () => {
  it.each(
    INDEXED.flatMap(([property, table, column]) =>
      (['asc', 'desc'] as const).map((direction) => [table, property, direction, column] as const),
    ),
  )(
    '%s by %s %s is read from an index, never sorted',
    async (table, _property, direction, column) => {
      const db = plans.db();
      const id = table === 'prompts' ? prompts.id : experiments.id;
      const order = sql`${db.spelling.orderTerm(column(db), direction)}, ${db.spelling.orderTerm(id, direction)}`;
      const plan = await plans.planOf(sql`${sql.identifier(table)}`, order);
      if (db.kind === 'sqlite') {
        expect(plan).toMatch(
          new RegExp(`USING (COVERING )?INDEX ${table}_organization(_\\w+)?_idx`),
        );
        expect(plan).not.toMatch(/TEMP B-TREE/);
      } else {
        expect(plan).toMatch(
          new RegExp(`Index (Only )?Scan (Backward )?using ${table}_\\w+_(idx|pkey)`),
        );
        expect(plan).not.toMatch(/^\s*(->\s+)?(Incremental )?Sort {2}\(/m);
      }
    },
  );
});

type Direction = 'asc' | 'desc';

/** Each long text: its table, the list's property, its indexed column and the list's order. */
const LONG_TEXTS: Array<[string, string, string, (db: Db, direction: Direction) => SQL]> = [
  [
    'prompts',
    'tools',
    'tool_names',
    (db, direction) => tableOrder(promptsList(db), db, { property: 'tools', direction }),
  ],
  [
    'prompts',
    'description',
    'description',
    (db, direction) => tableOrder(promptsList(db), db, { property: 'description', direction }),
  ],
  [
    'prompts',
    'context',
    'context',
    (db, direction) => tableOrder(promptsList(db), db, { property: 'context', direction }),
  ],
  [
    'experiments',
    'description',
    'description',
    (db, direction) => tableOrder(experimentsList, db, { property: 'description', direction }),
  ],
];

describe("the prompts and experiments lists' orders by a long text", () => {
  it.each(
    LONG_TEXTS.flatMap(([table, property, indexed, orderOf]) =>
      (['asc', 'desc'] as const).map(
        (direction) => [table, property, direction, indexed, orderOf] as const,
      ),
    ),
  )(
    '%s by %s %s is read from an index, sorting only texts that tie on their indexed prefix',
    async (table, _property, direction, indexed, orderOf) => {
      const db = plans.db();
      const plan = await plans.planOf(sql`${sql.identifier(table)}`, orderOf(db, direction));
      const index = `${table}_organization_${indexed}_idx`;
      if (db.kind === 'sqlite') {
        expect(plan).toMatch(new RegExp(`USING (COVERING )?INDEX ${index}`));
        expect(plan).not.toMatch(/TEMP B-TREE/);
      } else {
        expect(plan).toMatch(new RegExp(`Index (Only )?Scan (Backward )?using ${index}`));
        expect(plan).not.toMatch(/^\s*(->\s+)?Sort {2}\(/m);
      }
    },
  );
});

describe("the experiments list's agent_id search", () => {
  const byAgents = (...agentIds: number[]) => ({
    filters: agentIds.map((value) => ({ property: 'agent_id', kind: 'integer', value }) as const),
    window: {},
  });

  it("starts from the agent's variants, by index, instead of every experiment's", async () => {
    const db = plans.db();
    const plan = await plans.planOf(
      sql`experiments`,
      sql`id`,
      listWhere(experimentsList, 1, byAgents(7), db),
    );
    if (db.kind === 'sqlite') {
      // Not a subquery run for each of the organization's experiments.
      expect(plan).toMatch(/LIST SUBQUERY/);
      expect(plan).not.toMatch(/CORRELATED/);
      expect(plan).toMatch(/COVERING INDEX experiment_variants_agent_idx \(agent_id=\?\)/);
    } else {
      expect(plan).toMatch(/Index (Only )?Scan (on|using) experiment_variants_agent_idx/);
    }
  });

  it("intersects several agents' experiments before seeking any", async () => {
    const db = plans.db();
    const plan = await plans.planOf(
      sql`experiments`,
      sql`id`,
      listWhere(experimentsList, 1, byAgents(7, 8, 9), db),
    );
    // Not a seek for each combination of the agents' experiments' ids (SQLite: `id=? AND rowid=?`).
    expect(plan).not.toMatch(/id=\? AND rowid=\?/);
    expect(plan.match(/experiment_variants_agent_idx/g)).toHaveLength(3);
    if (db.kind === 'sqlite') expect(plan).toMatch(/INTERSECT/);
  });
});

describe("the prompts list's tools search", () => {
  it("intersects several tools' prompts before seeking any", async () => {
    const db = plans.db();
    const filters = ['lookup', 'send'].map(
      (value) => ({ property: 'tools', kind: 'text', value }) as const,
    );
    const plan = await plans.planOf(
      sql`prompts`,
      sql`id`,
      listWhere(promptsList(db), 1, { filters, window: {} }, db),
    );
    expect(plan).not.toMatch(/id=\? AND rowid=\?/);
    if (db.kind === 'sqlite') expect(plan).toMatch(/INTERSECT/);
  });
});

describe('two substring searches of the experiments list', () => {
  it.each<Array<'status' | 'name' | 'description'>>([
    ['status', 'name'],
    ['name', 'status'],
    ['description', 'name'],
  ])('%s and %s: the second is read from its own index, not the table', async (first, second) => {
    const db = plans.db();
    const filters = [first, second].map(
      (property) => ({ property, kind: 'text', value: 'stopped' }) as const,
    );
    const plan = await plans.planOf(
      sql`experiments`,
      sql`id`,
      listWhere(experimentsList, 1, { filters, window: {} }, db),
    );
    if (db.kind === 'sqlite') {
      // The second column's matches come from its index, as a list each row is tested against.
      expect(plan).toMatch(/LIST SUBQUERY/);
      expect(plan).toMatch(new RegExp(`COVERING INDEX experiments_organization_${second}_idx`));
      expect(plan).not.toMatch(/\bid=\?/);
    } else {
      expect(plan).not.toMatch(/SubPlan/);
    }
  });
});

describe("the prompts list's name_description search", () => {
  it('tests each column in its own index, not every row of the table', async () => {
    const db = plans.db();
    const filter = { property: 'name_description', kind: 'text_either', value: 'refund' } as const;
    const where = listWhere(promptsList(db), 1, { filters: [filter], window: {} }, db);
    const plan = await plans.planOf(sql`prompts`, sql`id`, where);
    if (db.kind === 'sqlite') {
      expect(plan).toMatch(/COVERING INDEX prompts_organization_name_idx/);
      expect(plan).toMatch(/COVERING INDEX prompts_organization_description_idx/);
      expect(plan).not.toMatch(/^SCAN prompts$/m);
      expect(plan).not.toMatch(/CORRELATED/);
    } else {
      // PostgreSQL indexes only a prefix of the description: both halves stay one condition.
      expect(plan).not.toMatch(/SubPlan/);
    }
  });
});

/** A search for a word no row holds, of a text property or of name and description at once. */
function searchOf<P extends string>(property: P) {
  return property === 'name_description'
    ? ({ property, kind: 'text_either', value: 'refund' } as const)
    : ({ property, kind: 'text', value: 'refund' } as const);
}

describe.runIf(onPostgres)("PostgreSQL's substring searches of the lists' texts", () => {
  beforeAll(async () => {
    // Enough rows of the organization that reading them all costs more than the trigram index,
    // and the statistics that say so.
    const db = plans.db();
    const [channel] = await queryTestDb<{ id: number }>(
      db,
      sql`INSERT INTO channels (organization_id, name, kind, provider)
          VALUES (1, 'Phone', 'telephony', 'records') RETURNING id`,
    );
    const [target] = await queryTestDb<{ id: number }>(
      db,
      sql`INSERT INTO channel_targets (organization_id, channel_id, target, target_mode)
          VALUES (1, ${channel!.id}, '+15550100001', 'inbound') RETURNING id`,
    );
    await queryTestDb(
      db,
      sql`INSERT INTO prompts (organization_id, name, type, llm_config, description, context,
            last_updated_by)
          SELECT 1, 'Prompt ' || i, 'agent', '{}', 'About ' || i, 'Context ' || i,
            'editor' || i || '@example.com'
          FROM generate_series(1, 5000) AS i`,
    );
    await queryTestDb(
      db,
      sql`INSERT INTO experiments (organization_id, name, description, target_id)
          SELECT 1, 'Experiment ' || i, 'About ' || i, ${target!.id}
          FROM generate_series(1, 5000) AS i`,
    );
    await queryTestDb(db, sql`VACUUM (ANALYZE) prompts, experiments`);
  });

  it.each([
    ['prompts', 'name', ['prompts_name_trgm_idx']],
    ['prompts', 'description', ['prompts_description_trgm_idx']],
    ['prompts', 'context', ['prompts_context_trgm_idx']],
    ['prompts', 'name_description', ['prompts_name_trgm_idx', 'prompts_description_trgm_idx']],
    ['prompts', 'last_updated_by', ['prompts_last_updated_by_trgm_idx']],
    ['experiments', 'name', ['experiments_name_trgm_idx']],
    ['experiments', 'description', ['experiments_description_trgm_idx']],
  ] as const)(
    '%s by %s find their rows through the trigram index',
    async (table, property, indexes) => {
      const db = plans.db();
      const window = {};
      const where =
        table === 'prompts'
          ? listWhere(promptsList(db), 1, { filters: [searchOf(property)], window }, db)
          : listWhere(experimentsList, 1, { filters: [searchOf(property)], window }, db);
      // With the table's scan and the plain index scans forbidden, a substring is read through an
      // index that can test it; without one, the plan reads the organization's rows by their index.
      const plan = await planText(db, sql`SELECT id FROM ${sql.identifier(table)} WHERE ${where}`, [
        'enable_seqscan',
        'enable_indexscan',
        'enable_indexonlyscan',
      ]);
      for (const index of indexes) expect(plan).toMatch(`Bitmap Index Scan on ${index}`);
    },
  );
});

describe.runIf(onPostgres)("PostgreSQL's first page of the prompts list by a long text", () => {
  it.each(['description', 'context'] as const)(
    'by %s reads the prompts without it in id order, not all of them sorted',
    async (property) => {
      const db = plans.db();
      assert(db.kind === 'postgres');
      const organizationId = (await createOrganization(db, `Prompts without ${property}`)).id;
      // Most prompts without the text: as one read, the order sorted all of them for page 0.
      const column = sql.identifier(property);
      await queryTestDb(
        db,
        sql`INSERT INTO prompts (organization_id, name, type, llm_config, ${column})
            SELECT ${organizationId}, 'Prompt ' || i, 'agent', '{}',
              CASE WHEN i % 4 = 0 THEN 'About ' || i END
            FROM generate_series(1, 1000) AS i`,
      );
      const firstWithout = (
        await queryTestDb<{ id: number }>(
          db,
          sql`SELECT id FROM prompts WHERE organization_id = ${organizationId}
              AND ${column} IS NULL ORDER BY id LIMIT 100`,
        )
      ).map(({ id }) => id);
      // The page's two reads of the keys stop at its end, then its 100 rows are read by key;
      // one read sorted all 750 prompts without the text.
      await expectFirstWithoutText(
        db,
        PROMPT_LIST,
        organizationId,
        property,
        { lastPage: 9, withoutText: firstWithout, maxScanned: 400 },
        async (query) =>
          (await listPrompts(db, organizationId, query, { withTools: false })).rows.map(
            ({ id }) => id,
          ),
      );
    },
  );
});
