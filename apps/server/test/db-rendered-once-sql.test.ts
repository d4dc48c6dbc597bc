// The parts of a list's statement that code fixes (its select list, its FROM clause, the events'
// item JSON) are rendered as text once per backend: the text must be what drizzle renders each time on that backend, and
// a part that binds a value must keep binding it.

import { is, SQL, sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { POSTGRES_SPELLING, SQLITE_SPELLING } from '../src/db/engine/spelling.js';
import { renderedOnceSql } from '../src/db/engine/list-sql.js';
import { selectListPage, type ListTable } from '../src/db/engine/list-table.js';
import { renderedSql, selectList } from '../src/db/engine/portable-sql.js';
import { itemJson } from '../src/db/repositories/events.js';
import { agents } from '../src/db/schema/sqlite.js';
import type { ListQuery } from '../src/vocabulary/list-query.js';

const SPELLINGS = { sqlite: SQLITE_SPELLING, postgres: POSTGRES_SPELLING };

const AGENT_TABLE: ListTable<'id' | 'name'> = {
  from: sql`${agents}`,
  organizationColumn: agents.organizationId,
  primaryKey: agents.id,
  columns: { id: agents.id, name: agents.name },
  fields: { id: agents.id, name: agents.name },
};

function nameOrder(direction: 'asc' | 'desc', limit: number): ListQuery<'id' | 'name'> {
  return {
    page: 0,
    limit,
    offset: 0,
    filters: [],
    order: { property: 'name', direction },
    orderKind: 'text',
    projection: null,
    window: {},
    after: null,
    walk: 'agents',
  };
}

describe.each(['sqlite', 'postgres'] as const)('renderedOnceSql on %s', (kind) => {
  const render = (query: SQL) => renderedSql(query, kind);

  it('renders a part once per owner and key, as drizzle renders it there each time', () => {
    const owner = {};
    let builds = 0;
    // A part spelled apart on the two backends: the text kept must be this backend's.
    const build = () => {
      builds += 1;
      return selectList({
        id: agents.id,
        names: SPELLINGS[kind].joined(agents.name, ', ', agents.id),
        sortKey: agents.name,
      });
    };
    const statement = (part: SQL) => sql`SELECT ${part} FROM ${agents} WHERE ${agents.id} = ${7}`;
    const first = statement(renderedOnceSql(kind, owner, 'select name', build));
    const second = statement(renderedOnceSql(kind, owner, 'select name', build));
    expect(builds).toBe(1);
    const expected = render(statement(build()));
    expect(render(first)).toEqual(expected);
    expect(render(second)).toEqual(expected);
    expect(expected.params).toEqual([7]);
  });

  it('builds anew for another key, owner or backend', () => {
    const owner = {};
    const built: string[] = [];
    const build = (name: string) => () => {
      built.push(name);
      return selectList({ [name]: agents.name });
    };
    renderedOnceSql(kind, owner, 'a', build('a'));
    renderedOnceSql(kind, owner, 'b', build('b'));
    renderedOnceSql(kind, {}, 'a', build('a'));
    renderedOnceSql(kind === 'sqlite' ? 'postgres' : 'sqlite', owner, 'a', build('a'));
    renderedOnceSql(kind, owner, 'a', build('a'));
    expect(built).toEqual(['a', 'b', 'a', 'a']);
  });

  it('keeps a part that binds a value as built, so the value is still bound', () => {
    const part = renderedOnceSql(kind, {}, 'bound', () => sql`${agents.name} = ${'Ava'}`);
    const { sql: text, params } = render(sql`SELECT 1 FROM ${agents} WHERE ${part}`);
    expect(params).toEqual(['Ava']);
    expect(text).toContain(kind === 'sqlite' ? '?' : '$1');
  });

  it('reads a page with the select list and FROM clause its table kept, whatever the page', () => {
    /** The statement that reads the page, after the count (of 1,000 agents) before it. */
    const pageRead = (query: ListQuery<'id' | 'name'>) => {
      const steps = selectListPage(AGENT_TABLE, 1, query, { kind, spelling: SPELLINGS[kind] });
      steps.next();
      const read = steps.next([{ n: 1000 }]);
      if (read.done || !('sql' in read.value)) throw new Error('no page read');
      return read.value.sql;
    };
    const partsOf = (statement: SQL) => statement.queryChunks.filter((chunk) => is(chunk, SQL));
    const [firstSelect, firstFrom] = partsOf(pageRead(nameOrder('asc', 5)));
    const [select, from] = partsOf(pageRead(nameOrder('desc', 20)));
    // The same objects, not new ones rendered again.
    expect(select).toBe(firstSelect);
    expect(from).toBe(firstFrom);
  });

  it("renders the events' item JSON once per projection, as drizzle renders it", () => {
    const db = { kind, spelling: SPELLINGS[kind] };
    const projection = new Set(['type', 'attributes']);
    const first = itemJson(db, projection);
    expect(itemJson(db, new Set(['attributes', 'type']))).toBe(first);
    expect(itemJson(db, null)).toBe(itemJson(db, null));
    expect(itemJson(db, null)).not.toBe(first);
    // One chunk of text with nothing bound: what building the object each time renders.
    expect(first.queryChunks).toHaveLength(1);
    const built = SPELLINGS[kind].jsonObject([
      { name: 'type', value: sql.identifier('type'), isJson: false },
      { name: 'attributes', value: sql.identifier('attributes'), isJson: true },
    ]);
    expect(render(first)).toEqual(render(built));
    expect(render(first).params).toEqual([]);
  });
});
