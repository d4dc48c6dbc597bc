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

/** A stopped experiment whose sessions were created at `times`: every third in its second variant. */
async function experimentWithSessions(idPrefix: string, times: readonly string[]) {
  const created = await api.request<Schemas['Experiment']>('POST', '/api/v1/experiments/', {
    key: acme.key,
    body: experimentBody(fx.targets.second, [fx.agents.pinned, fx.agents.alsoPinned]),
  });
  expect((await call('POST', `${created.body.id}/start`)).status).toBe(200);
  expect((await call('POST', `${created.body.id}/stop`)).status).toBe(200);
  const [first, second] = created.body.variants.map((v) => v.id) as [number, number];
  const variantOf = (i: number) => (i % 3 === 0 ? second : first);
  await insertTestSessions(
    api.db,
    times.map((createdAt, i) => ({
      id: `${idPrefix}-${i}`,
      organizationId: acme.organizationId,
      targetId: fx.targets.second,
      agentId: fx.agents.pinned,
      experimentId: created.body.id,
      variantId: variantOf(i),
      createdAt,
    })),
  );
  return { id: created.body.id, variantOf };
}

/** Each bucket holds, per variant, exactly the sessions from its start to the next bound. */
function expectCountsByBucket(
  t: Timeline,
  end: string,
  times: readonly string[],
  variantOf: (i: number) => number,
) {
  const bounds = [...starts(t), end];
  t.buckets.forEach((bucket, b) => {
    for (const variant of bucket.variants) {
      const expected = times.filter(
        (time, i) =>
          time >= bounds[b]! && time < bounds[b + 1]! && variantOf(i) === variant.variant_id,
      ).length;
      expect(variant.session_count, `${bucket.start} ${variant.variant_id}`).toBe(expected);
    }
  });
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

  it('has 23 and 25 hour buckets on those days in New York and Paris', async () => {
    // Local midnights of the spring and fall change days, and the hour that repeats in the fall.
    const zones = [
      ['America/New_York', '2026-03-08T05:00:00Z', '2026-11-01T04:00:00Z', '01:00'],
      ['Europe/Paris', '2026-03-28T23:00:00Z', '2026-10-24T22:00:00Z', '02:00'],
    ] as const;
    for (const [zone, spring, fall, repeated] of zones) {
      const hours = async (start: string, length: number) => {
        const t = await okTimeline(stopped.id, {
          interval: 'hour',
          time_zone: zone,
          start_datetime: start,
          end_datetime: new Date(Date.parse(start) + length * HOUR).toISOString(),
        });
        expect(t.buckets, zone).toHaveLength(length);
        expect(new Set(hoursBetween(t))).toEqual(new Set([1]));
        return t.buckets.map((b) => localTime(b.start, zone));
      };
      // The hour the clock skips has no bucket; the hour it repeats has two.
      expect((await hours(spring, 23)).slice(0, 4), zone).toEqual([
        '00:00',
        '01:00',
        '03:00',
        '04:00',
      ]);
      const fallHours = await hours(fall, 25);
      expect(
        fallHours.filter((h) => h === repeated),
        zone,
      ).toHaveLength(2);
      expect(new Set(fallHours).size, zone).toBe(24);
    }
  });

  it("has a bucket for each local hour across Lord Howe's 30-minute clock changes", async () => {
    const zone = 'Australia/Lord_Howe';
    // The local days of 5 April 2026 (02:00 back to 01:30: UTC+11 to +10:30) and 4 October 2026
    // (02:00 on to 02:30), with their sessions every 7 minutes from an hour before to an hour
    // after, and at the edges of the half hour the clock repeats or skips.
    const days = [
      {
        from: '2026-04-04T13:00:00.000Z',
        to: '2026-04-05T13:30:00.000Z',
        edges: ['14:59:59.999', '15:00:00.000', '15:29:59.999', '15:30:00.000'],
        firstHours: ['00:00', '01:00', '02:00', '03:00'],
        firstLengths: [1, 1.5, 1],
      },
      {
        from: '2026-10-03T13:30:00.000Z',
        to: '2026-10-04T13:00:00.000Z',
        edges: ['15:29:59.999', '15:30:00.000', '15:59:59.999', '16:00:00.000'],
        firstHours: ['00:00', '01:00', '02:30', '03:00'],
        firstLengths: [1, 1, 0.5],
      },
    ];
    for (const [d, day] of days.entries()) {
      const [from, to] = [Date.parse(day.from) - HOUR, Date.parse(day.to) + HOUR];
      const times = [
        ...Array.from({ length: Math.floor((to - from) / (7 * 60_000)) }, (_, i) =>
          new Date(from + i * 7 * 60_000).toISOString(),
        ),
        ...day.edges.map((edge) => `${day.from.slice(0, 10)}T${edge}Z`),
      ];
      const { id, variantOf } = await experimentWithSessions(`lord-howe-${d}`, times);
      const hours = await okTimeline(id, {
        interval: 'hour',
        time_zone: zone,
        start_datetime: day.from,
        end_datetime: day.to,
      });
      expect(hours.buckets, day.from).toHaveLength(24);
      const local = hours.buckets.map((b) => localTime(b.start, zone));
      expect(local.slice(0, 4)).toEqual(day.firstHours);
      expect(new Set(local.map((h) => h.slice(0, 2))).size).toBe(24);
      expect(hoursBetween(hours).slice(0, 3)).toEqual(day.firstLengths);
      expect(hoursBetween(hours).slice(3)).toEqual(Array<number>(20).fill(1));
      expectCountsByBucket(hours, day.to, times, variantOf);
      const inDay = times.filter((time) => time >= day.from && time < day.to).length;
      expect([...totals(hours).values()].reduce((sum, n) => sum + n, 0)).toBe(inDay);

      const daily = await okTimeline(id, {
        time_zone: zone,
        start_datetime: day.from,
        end_datetime: day.to,
      });
      expect(starts(daily)).toEqual([day.from]);
      expect(totals(daily)).toEqual(totals(hours));
    }
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
    const { id, variantOf } = await experimentWithSessions('monrovia', times);
    const t = await okTimeline(id, {
      time_zone: 'Africa/Monrovia',
      start_datetime: '1970-06-01T00:00:00Z',
      end_datetime: '1970-06-04T00:00:00Z',
    });
    expect(t.buckets[0]!.start).toBe('1970-05-31T00:44:30.000Z');
    expect(t.buckets).toHaveLength(4);
    expectCountsByBucket(t, '1970-06-04T00:44:30.000Z', times, variantOf);
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
