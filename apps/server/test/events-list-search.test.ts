// GET /api/v1/events/: which events a page holds and which of their fields (docs/decisions.md
// section 2): search, fields and the time window. Every response is checked against the spec by
// the harness.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openEventsList, timestamps, type EventsList } from './support/events-list-fixture.js';
import type { Schemas } from './support/harness.js';

let api: EventsList['api'];
let list: EventsList['list'];

beforeAll(async () => {
  ({ api, list } = await openEventsList());
});

afterAll(() => api.close());

describe('search', () => {
  it('matches text fields by case-insensitive substring', async () => {
    const res = await list('?search_fields=description&search_field_values=SESSION%20STARTED');
    expect(res.body.items.map((i) => i.session_id)).toEqual(['s-2', 's-1']);
    expect(res.body.total_count).toBe(2);
  });

  it('treats LIKE wildcards in a value as literal characters', async () => {
    const percent = await list('?search_fields=description&search_field_values=50%25');
    expect(percent.body.items.map((i) => i.type)).toEqual(['tool-call']);
    const underscore = await list('?search_fields=type&search_field_values=_');
    expect(underscore.body.total_count).toBe(0);
  });

  it('matches identifiers exactly and case-sensitively', async () => {
    const exact = await list('?search_fields=session_id&search_field_values=s-1');
    expect(exact.body.total_count).toBe(3);
    const partial = await list('?search_fields=session_id&search_field_values=s-');
    expect(partial.body.total_count).toBe(0);
    const user = await list('?search_fields=user_id&search_field_values=%2B14155550101');
    expect(user.body.items.map((i) => i.session_id)).toEqual(['s-2']);
  });

  it('matches date-times by prefix of the ISO text', async () => {
    const month = await list('?search_fields=timestamp&search_field_values=2026-05');
    expect(month.body.total_count).toBe(4);
    const day = await list('?search_fields=timestamp&search_field_values=2026-06-15');
    expect(timestamps(month.body).every((t) => t.startsWith('2026-05'))).toBe(true);
    expect(timestamps(day.body)).toEqual(['2026-06-15T23:59:59.999Z']);
  });

  it('matches object fields by substring of their JSON text', async () => {
    const res = await list('?search_fields=attributes&search_field_values=%22channel%22:%22SMS%22');
    expect(res.body.items.map((i) => i.session_id)).toEqual(['s-2']);
  });

  it('combines several pairs with AND, pairing by index', async () => {
    const res = await list(
      '?search_fields=category&search_fields=source_id&search_field_values=tool&search_field_values=12',
    );
    expect(res.body.items.map((i) => i.type)).toEqual(['tool-error', 'tool-call']);
    const none = await list(
      '?search_fields=category&search_fields=type&search_field_values=session&search_field_values=tool',
    );
    expect(none.body.items).toEqual([]);
  });

  it('takes a comma or brackets in a value literally', async () => {
    const res = await list('?search_fields=type&search_field_values=session-started,tool-call');
    expect(res.body.total_count).toBe(0);
  });

  it('rejects search pairs of different lengths', async () => {
    const res = await list<Schemas['HTTPValidationError']>(
      '?search_fields=type&search_fields=source&search_field_values=x',
    );
    expect(res.status).toBe(422);
    expect(res.body.detail[0]).toMatchObject({
      loc: ['query', 'search_field_values'],
      type: 'value_error',
    });
    expect(res.body.detail[0]?.msg).toContain(
      'search_fields has 2 entries but search_field_values has 1',
    );
  });

  it('rejects an unknown property name and lists the allowed ones', async () => {
    const res = await list<Schemas['HTTPValidationError']>(
      '?search_fields=colour&search_field_values=red',
    );
    expect(res.status).toBe(422);
    expect(res.body.detail[0]).toMatchObject({ loc: ['query', 'search_fields', 0], type: 'enum' });
    expect(res.body.detail[0]?.msg).toContain('"session_id"');
  });
});

describe('fields', () => {
  it('keeps only the listed properties, and always the timestamp', async () => {
    const res = await list('?fields=type&fields=attributes&limit=1');
    expect(res.body.items).toEqual([
      { timestamp: '2026-06-16T00:00:00.000Z', type: null, attributes: null },
    ]);
  });

  it('rejects an unknown field name', async () => {
    const res = await list<Schemas['HTTPValidationError']>('?fields=colour');
    expect(res.status).toBe(422);
    expect(res.body.detail[0]?.loc).toEqual(['query', 'fields', 0]);
  });
});

describe('time window', () => {
  it('includes the start and excludes the end', async () => {
    const res = await list(
      '?start_datetime=2026-05-01T10:00:05Z&end_datetime=2026-06-15T23:59:59.999Z',
    );
    expect(timestamps(res.body)).toEqual([
      '2026-05-02T08:30:00.000Z',
      '2026-05-01T10:00:05.000Z',
      '2026-05-01T10:00:05.000Z',
    ]);
  });

  it('understands offsets', async () => {
    // 2026-06-16T02:00+02:00 is midnight UTC, so the last event is excluded.
    const res = await list(
      '?start_datetime=2026-06-15T00:00:00Z&end_datetime=2026-06-16T02:00:00%2B02:00',
    );
    expect(timestamps(res.body)).toEqual(['2026-06-15T23:59:59.999Z']);
  });

  it('rejects a start after the end', async () => {
    const res = await list<Schemas['HTTPValidationError']>(
      '?start_datetime=2026-06-01T00:00:00Z&end_datetime=2026-05-01T00:00:00Z',
    );
    expect(res.status).toBe(422);
    expect(res.body.detail[0]).toMatchObject({
      loc: ['query', 'start_datetime'],
      type: 'value_error',
    });
  });

  it.each(['yesterday', '2026-05-01', '2026-05-01T10:00:00'])(
    'rejects %s (not a date-time with a zone)',
    async (value) => {
      const res = await list<Schemas['HTTPValidationError']>(`?start_datetime=${value}`);
      expect(res.status).toBe(422);
      expect(res.body.detail[0]).toMatchObject({
        loc: ['query', 'start_datetime'],
        type: 'datetime_parsing',
      });
    },
  );
});
