// The results timeline: sessions per variant per local day or hour, contiguous buckets that add
// up to the results, correct across daylight saving changes and in :30 and :45 zones, and every
// bad parameter a 422 naming it.

import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sessions } from '../src/db/schema/sqlite.js';
import type { Schemas, Tenant, TestApi } from './support/harness.js';
import {
  createRoutingTestbed,
  experimentBody,
  type RoutingFixture,
} from './support/routing-fixture.js';
import { insertTestSessions, queryTestDb } from './support/test-database.js';

let api: TestApi;
let acme: Tenant;
let globex: Tenant;
let fx: RoutingFixture;
/** A stopped experiment with routed sessions; its run is only milliseconds long. */
let stopped: Schemas['Experiment'];
let results: Schemas['ExperimentResults'];

type Timeline = Schemas['ExperimentTimeline'];
type ValidationError = Schemas['HTTPValidationError'];

const HOUR = 3_600_000;
const ROUTED = 40;

const call = <T>(method: string, path: string, key = acme.key) =>
  api.request<T>(method, `/api/v1/experiments/${path}`, { key });

const timeline = <T = Timeline>(id: number, query: Record<string, string> = {}, key = acme.key) =>
  call<T>('GET', `${id}/results/timeline?${new URLSearchParams(query).toString()}`, key);

async function okTimeline(id: number, query: Record<string, string> = {}): Promise<Timeline> {
  const res = await timeline(id, query);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
}

const starts = (t: Timeline) => t.buckets.map((b) => b.start);
/** Gaps between consecutive bucket starts, in hours. */
const hoursBetween = (t: Timeline) =>
  t.buckets.slice(1).map((b, i) => (Date.parse(b.start) - Date.parse(t.buckets[i]!.start)) / HOUR);

/** The local wall clock of `instant` in `timeZone`, as `HH:MM`. */
const localTime = (instant: string, timeZone: string) =>
  new Intl.DateTimeFormat('en-GB', {
    timeZone,
    hour: '2-digit',
    minute: '2-digit',
    hourCycle: 'h23',
  }).format(new Date(instant));

/** Sessions per variant id over all buckets. */
function totals(t: Timeline): Map<number, number> {
  const sum = new Map<number, number>();
  for (const bucket of t.buckets) {
    for (const v of bucket.variants)
      sum.set(v.variant_id, (sum.get(v.variant_id) ?? 0) + v.session_count);
  }
  return sum;
}

beforeAll(async () => {
  ({ api, acme, globex, fx } = await createRoutingTestbed());
  const created = await api.request<Schemas['Experiment']>('POST', '/api/v1/experiments/', {
    key: acme.key,
    body: experimentBody(fx.targets.main, [fx.agents.pinned, fx.agents.alsoPinned]),
  });
  expect(created.status).toBe(200);
  expect((await call('POST', `${created.body.id}/start`)).status).toBe(200);
  for (let i = 0; i < ROUTED; i += 1) {
    const res = await api.request('POST', `/api/v1/channels/targets/${fx.targets.main}/sessions`, {
      key: acme.key,
      body: { user_id: `user-${i}` },
    });
    expect(res.status).toBe(200);
  }
  const stop = await call<Schemas['Experiment']>('POST', `${created.body.id}/stop`);
  expect(stop.status).toBe(200);
  stopped = stop.body;
  const res = await call<Schemas['ExperimentResults']>('GET', `${stopped.id}/results`);
  results = res.body;
});

afterAll(() => api.close());

describe('the results timeline', () => {
  it('adds up to the results over the whole run, by day and by hour, in any zone', async () => {
    // Both variants got sessions, so a sum that dropped or swapped a variant would show.
    expect(results.variants.every((v) => v.session_count > 0)).toBe(true);
    const expected = new Map(results.variants.map((v) => [v.variant_id, v.session_count]));
    for (const query of [
      {} as Record<string, string>,
      { interval: 'hour', time_zone: 'Asia/Kathmandu' },
      { interval: 'day', time_zone: 'America/New_York' },
    ]) {
      const t = await okTimeline(stopped.id, query);
      expect(t.experiment_id).toBe(stopped.id);
      expect(totals(t)).toEqual(expected);
      // The window holds the whole run, widened to whole buckets.
      expect(Date.parse(t.buckets[0]!.start)).toBeLessThanOrEqual(Date.parse(stopped.started_at!));
      for (const bucket of t.buckets) {
        expect(bucket.variants.map((v) => v.variant_id)).toEqual(
          results.variants.map((v) => v.variant_id),
        );
      }
    }
    const byDefault = await okTimeline(stopped.id);
    expect(byDefault.interval).toBe('day');
    expect(byDefault.time_zone).toBe('UTC');
    expect(byDefault.buckets[0]!.start).toBe(`${stopped.started_at!.slice(0, 10)}T00:00:00.000Z`);
  });

  it('counts each session in the bucket of its time, empty buckets included', async () => {
    // Spread this experiment's sessions over five days, one every 3 h 17 min, from a New York
    // midnight across the end of daylight saving time (1 November 2026).
    const first = Date.parse('2026-10-30T04:00:00Z');
    const ids = await queryTestDb<{ id: string }>(
      api.db,
      sql`SELECT ${sessions.id} AS id FROM ${sessions} WHERE ${sessions.experimentId} = ${stopped.id} ORDER BY ${sessions.id}`,
    );
    expect(ids).toHaveLength(ROUTED);
    const times = ids.map((_, i) => new Date(first + i * (3 * HOUR + 17 * 60_000)).toISOString());
    for (const [i, { id }] of ids.entries()) {
      await queryTestDb(
        api.db,
        sql`UPDATE ${sessions} SET ${sql.identifier('created_at')} = ${times[i]} WHERE ${sessions.id} = ${id}`,
      );
    }
    const t = await okTimeline(stopped.id, {
      time_zone: 'America/New_York',
      start_datetime: '2026-10-28T12:00:00Z',
      end_datetime: '2026-11-08T00:00:00-05:00',
    });
    // From the local midnight of 28 October to 8 November (exclusive): 11 days; the sessions
    // run from 30 October to 4 November, so the first two and the last three are empty.
    expect(t.buckets).toHaveLength(11);
    expect(t.buckets[0]!.start).toBe('2026-10-28T04:00:00.000Z');
    for (const bucket of t.buckets)
      expect(localTime(bucket.start, 'America/New_York')).toBe('00:00');
    const bounds = [...starts(t), '2026-11-08T05:00:00.000Z'];
    t.buckets.forEach((bucket, i) => {
      const inBucket = times.filter((time) => time >= bounds[i]! && time < bounds[i + 1]!).length;
      const counted = bucket.variants.reduce((sum, v) => sum + v.session_count, 0);
      expect(counted, bucket.start).toBe(inBucket);
    });
    const empty = (b: Schemas['TimelineBucket']) => b.variants.every((v) => v.session_count === 0);
    expect(t.buckets.map(empty)).toEqual([
      true,
      true,
      ...Array<boolean>(6).fill(false),
      true,
      true,
      true,
    ]);
    expect(totals(t)).toEqual(
      new Map(results.variants.map((v) => [v.variant_id, v.session_count])),
    );
  });

  it('has a 23-hour and a 25-hour day in New York across daylight saving changes', async () => {
    const spring = await okTimeline(stopped.id, {
      time_zone: 'America/New_York',
      start_datetime: '2026-03-07T12:00:00Z',
      end_datetime: '2026-03-10T04:00:00Z',
    });
    expect(starts(spring)).toEqual([
      '2026-03-07T05:00:00.000Z',
      '2026-03-08T05:00:00.000Z',
      '2026-03-09T04:00:00.000Z',
    ]);
    expect(hoursBetween(spring)).toEqual([24, 23]);

    const fall = await okTimeline(stopped.id, {
      time_zone: 'America/New_York',
      start_datetime: '2026-11-01T04:00:00Z',
      end_datetime: '2026-11-03T05:00:00Z',
    });
    expect(starts(fall)).toEqual(['2026-11-01T04:00:00.000Z', '2026-11-02T05:00:00.000Z']);
    expect(hoursBetween(fall)).toEqual([25]);
  });

  it('has 23 and 25 hour buckets on those New York days', async () => {
    const spring = await okTimeline(stopped.id, {
      interval: 'hour',
      time_zone: 'America/New_York',
      start_datetime: '2026-03-08T05:00:00Z',
      end_datetime: '2026-03-09T04:00:00Z',
    });
    expect(spring.buckets).toHaveLength(23);
    expect(new Set(hoursBetween(spring))).toEqual(new Set([1]));
    // 02:00 does not exist that night: 01:00 EST is followed by 03:00 EDT.
    expect(spring.buckets.slice(0, 4).map((b) => localTime(b.start, 'America/New_York'))).toEqual([
      '00:00',
      '01:00',
      '03:00',
      '04:00',
    ]);

    const fall = await okTimeline(stopped.id, {
      interval: 'hour',
      time_zone: 'America/New_York',
      start_datetime: '2026-11-01T04:00:00Z',
      end_datetime: '2026-11-02T05:00:00Z',
    });
    expect(fall.buckets).toHaveLength(25);
    expect(new Set(hoursBetween(fall))).toEqual(new Set([1]));
    // 01:00 comes twice, first in daylight saving time, then in standard time.
    expect(fall.buckets.slice(0, 4).map((b) => localTime(b.start, 'America/New_York'))).toEqual([
      '00:00',
      '01:00',
      '01:00',
      '02:00',
    ]);
  });

  it('starts Kolkata days at local midnight and Kathmandu hours at the local hour', async () => {
    const kolkata = await okTimeline(stopped.id, {
      time_zone: 'Asia/Kolkata',
      start_datetime: '2026-03-10T00:00:00Z',
      end_datetime: '2026-03-12T00:00:00Z',
    });
    expect(kolkata.time_zone).toBe('Asia/Kolkata');
    expect(starts(kolkata)).toEqual([
      '2026-03-09T18:30:00.000Z',
      '2026-03-10T18:30:00.000Z',
      '2026-03-11T18:30:00.000Z',
    ]);

    const kathmandu = await okTimeline(stopped.id, {
      interval: 'hour',
      time_zone: 'Asia/Kathmandu',
      start_datetime: '2026-03-10T00:00:00Z',
      end_datetime: '2026-03-10T03:00:00Z',
    });
    expect(starts(kathmandu)).toEqual([
      '2026-03-09T23:15:00.000Z',
      '2026-03-10T00:15:00.000Z',
      '2026-03-10T01:15:00.000Z',
      '2026-03-10T02:15:00.000Z',
    ]);
  });

  it('counts days that do not start on a quarter hour (Monrovia, 1970: UTC-00:44:30)', async () => {
    // Buckets of every zone today start on quarter hours, which the stored counts are kept by;
    // a bucket that does not is counted from the sessions themselves, and must agree.
    const created = await api.request<Schemas['Experiment']>('POST', '/api/v1/experiments/', {
      key: acme.key,
      body: experimentBody(fx.targets.second, [fx.agents.pinned, fx.agents.alsoPinned]),
    });
    expect((await call('POST', `${created.body.id}/start`)).status).toBe(200);
    expect((await call('POST', `${created.body.id}/stop`)).status).toBe(200);
    const [first, second] = created.body.variants.map((v) => v.id) as [number, number];
    // Every 47 minutes from 1 June 1970 00:00 UTC for three days, and around a local midnight.
    const times = [
      ...Array.from({ length: 92 }, (_, i) =>
        new Date(Date.parse('1970-06-01T00:00:00Z') + i * 47 * 60_000).toISOString(),
      ),
      '1970-06-02T00:44:29.999Z',
      '1970-06-02T00:44:30.000Z',
      '1970-06-02T00:44:59.999Z',
      '1970-06-02T00:45:00.000Z',
    ];
    await insertTestSessions(
      api.db,
      times.map((createdAt, i) => ({
        id: `monrovia-${i}`,
        organizationId: acme.organizationId,
        targetId: fx.targets.second,
        agentId: fx.agents.pinned,
        experimentId: created.body.id,
        variantId: i % 3 === 0 ? second : first,
        createdAt,
      })),
    );
    const t = await okTimeline(created.body.id, {
      time_zone: 'Africa/Monrovia',
      start_datetime: '1970-06-01T00:00:00Z',
      end_datetime: '1970-06-04T00:00:00Z',
    });
    expect(t.buckets[0]!.start).toBe('1970-05-31T00:44:30.000Z');
    expect(t.buckets).toHaveLength(4);
    const bounds = [...starts(t), '1970-06-04T00:44:30.000Z'];
    t.buckets.forEach((bucket, b) => {
      for (const variant of bucket.variants) {
        const expected = times.filter(
          (time, i) =>
            time >= bounds[b]! &&
            time < bounds[b + 1]! &&
            (i % 3 === 0 ? second : first) === variant.variant_id,
        ).length;
        expect(variant.session_count, `${bucket.start} ${variant.variant_id}`).toBe(expected);
      }
    });
    expect([...totals(t).values()].reduce((sum, n) => sum + n, 0)).toBe(times.length);
  });

  it('answers 1000 buckets and refuses 1001, naming the limit', async () => {
    const window = { interval: 'hour', start_datetime: '2026-01-01T00:00:00Z' };
    const atLimit = await okTimeline(stopped.id, {
      ...window,
      end_datetime: new Date(Date.parse('2026-01-01T00:00:00Z') + 1000 * HOUR).toISOString(),
    });
    expect(atLimit.buckets).toHaveLength(1000);

    const res = await timeline<ValidationError>(stopped.id, {
      ...window,
      end_datetime: new Date(Date.parse('2026-01-01T00:00:00Z') + 1001 * HOUR).toISOString(),
    });
    expect(res.status).toBe(422);
    expect(res.body.detail[0]!.loc).toEqual(['query', 'end_datetime']);
    expect(res.body.detail[0]!.msg).toContain('1000');
  });

  it('refuses a bad parameter with a 422 naming it', async () => {
    const cases: Array<[Record<string, string>, string]> = [
      [{ time_zone: 'Mars/Olympus_Mons' }, 'time_zone'],
      [{ time_zone: '+05:30' }, 'time_zone'],
      [{ interval: 'week' }, 'interval'],
      [{ start_datetime: 'yesterday' }, 'start_datetime'],
      [
        { start_datetime: '2026-03-10T00:00:00Z', end_datetime: '2026-03-09T00:00:00Z' },
        'end_datetime',
      ],
      [
        { start_datetime: '2026-03-10T00:00:00Z', end_datetime: '2026-03-10T00:00:00Z' },
        'end_datetime',
      ],
    ];
    for (const [query, parameter] of cases) {
      const res = await timeline<ValidationError>(stopped.id, query);
      expect(res.status, JSON.stringify(query)).toBe(422);
      expect(res.body.detail[0]!.loc).toEqual(['query', parameter]);
    }
  });

  it('gives a draft no buckets', async () => {
    const draft = await api.request<Schemas['Experiment']>('POST', '/api/v1/experiments/', {
      key: acme.key,
      body: experimentBody(fx.targets.second, [fx.agents.pinned, fx.agents.alsoPinned]),
    });
    expect(draft.status).toBe(200);
    const t = await okTimeline(draft.body.id, { interval: 'hour' });
    expect(t).toEqual({
      experiment_id: draft.body.id,
      interval: 'hour',
      time_zone: 'UTC',
      buckets: [],
    });
  });

  it("is a 404 for another organization's experiment", async () => {
    const res = await timeline(stopped.id, {}, globex.key);
    expect(res.status).toBe(404);
  });
});
