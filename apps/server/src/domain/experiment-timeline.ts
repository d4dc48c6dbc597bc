// The results timeline's buckets: local midnights or local hours of an IANA time zone, found with
// the platform's Intl time zone data, so a day across a daylight saving change has 23 or 25 hours
// and a zone with a :30 or :45 offset starts its hours at the local hour (docs/decisions.md
// section 9). Only instants are computed here; counting sessions per bucket is the repository's.

import { InputRuleError, type InputProblem } from './errors.js';
import type { ExperimentStatus } from '../vocabulary/experiments.js';

export type TimelineInterval = 'hour' | 'day';

/** More buckets than this is a 422: the answer and its one counting statement stay bounded. */
export const MAX_TIMELINE_BUCKETS = 1000;

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;
const NOMINAL_MS: Record<TimelineInterval, number> = { hour: HOUR_MS, day: DAY_MS };
// No real zone ever moved its clock by more than this at once, so the next bucket starts within
// this much past a bucket's nominal length.
const LONGEST_CLOCK_CHANGE_MS = 3 * HOUR_MS;

// An IANA name (`Area/Location`, `UTC`, `Etc/GMT+5`); Intl also reads offsets such as `+05:30`,
// which are not zone names and are refused like any unknown name.
const ZONE_NAME = /^[A-Za-z][A-Za-z0-9_+\-/]*$/;

/** A time zone's local wall clock: `wallAt(t)` is t's local date and time, read as UTC. */
export interface Zone {
  name: string;
  wallAt(instant: number): number;
}

/** The zone named `name`, or null when the platform does not know it as an IANA name. */
export function zoneNamed(name: string): Zone | null {
  if (!ZONE_NAME.test(name)) return null;
  let format: Intl.DateTimeFormat;
  try {
    format = new Intl.DateTimeFormat('en-US', {
      timeZone: name,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
  } catch {
    return null;
  }
  return {
    // As sent: the platform's canonical names are ICU's, older ones (Asia/Calcutta).
    name,
    wallAt(instant) {
      const part: Record<string, number> = {};
      for (const { type, value } of format.formatToParts(instant)) part[type] = Number(value);
      const wall = Date.UTC(
        part.year!,
        part.month! - 1,
        part.day,
        part.hour,
        part.minute,
        part.second,
      );
      return wall + (((instant % 1000) + 1000) % 1000);
    },
  };
}

function truncate(wall: number, interval: TimelineInterval): number {
  const size = NOMINAL_MS[interval];
  return Math.floor(wall / size) * size;
}

const offsetAt = (zone: Zone, instant: number) => zone.wallAt(instant) - instant;

/**
 * The start of the bucket that holds `instant`: the last bucket start (see `bucketAfter`) at or
 * before it.
 */
export function bucketStart(zone: Zone, interval: TimelineInterval, instant: number): number {
  let start = localStartBefore(zone, interval, instant);
  for (let next = bucketAfter(zone, interval, start); next <= instant;) {
    start = next;
    next = bucketAfter(zone, interval, start);
  }
  return start;
}

/**
 * A bucket start at or before `instant`, at most a bucket and a clock change before it: the
 * instant whose clock reads the local midnight or hour `instant` is in, or the jump over it.
 */
function localStartBefore(zone: Zone, interval: TimelineInterval, instant: number): number {
  const localStart = truncate(zone.wallAt(instant), interval);
  // The instant whose wall clock reads localStart: try the offset at `instant`, then the offset
  // at that first guess (a clock change between the local start and `instant`).
  let guess = instant;
  for (let attempt = 0; attempt < 2; attempt += 1) {
    guess = localStart - offsetAt(zone, guess);
    if (guess <= instant && zone.wallAt(guess) === localStart) return guess;
  }
  // The local start never shows on the clock (it jumped over it, as some zones do at midnight):
  // the bucket starts at the first instant of the bucket, the moment of the jump.
  let before = instant - NOMINAL_MS[interval] - LONGEST_CLOCK_CHANGE_MS;
  let inside = instant;
  while (inside - before > 1) {
    const middle = Math.floor((before + inside) / 2);
    if (truncate(zone.wallAt(middle), interval) >= localStart) inside = middle;
    else before = middle;
  }
  return inside;
}

/**
 * The starts of the buckets after the one starting at `start`, whose wall clock reads `wall`,
 * and the wall clock at the last of them. When `start` is on the hour or at midnight and the
 * zone's offset is the same a day later, the clock ran evenly for that day (no zone changes its
 * offset twice within a day), so the day's buckets are nominal: one reading of the clock gives a
 * day of hours. Otherwise the next bucket is found on the clock, alone.
 */
function followingBuckets(zone: Zone, interval: TimelineInterval, start: number, wall: number) {
  const dayLater = start + DAY_MS;
  const dayLaterWall = zone.wallAt(dayLater);
  if (truncate(wall, interval) === wall && dayLaterWall - dayLater === wall - start) {
    const size = NOMINAL_MS[interval];
    const starts = Array.from({ length: DAY_MS / size }, (_, i) => start + (i + 1) * size);
    return { starts, lastWall: dayLaterWall };
  }
  const next = bucketAfter(zone, interval, start);
  return { starts: [next], lastWall: zone.wallAt(next) };
}

/**
 * The first bucket start after `after`. A bucket starts whenever the clock reads a local hour
 * (or midnight), and where the clock jumps forward past one, at the jump. A clock set back by a
 * whole hour reads that hour again, a second bucket; one set back by less (Lord Howe's 30
 * minutes, 02:00 to 01:30) does not, so the bucket it was in goes on until the next reading.
 */
function bucketAfter(zone: Zone, interval: TimelineInterval, after: number): number {
  const wall = zone.wallAt(after);
  const offset = wall - after;
  const evenNext = after + truncate(wall, interval) + NOMINAL_MS[interval] - wall;
  if (offsetAt(zone, evenNext) === offset) return evenNext;
  // The clock changes before that reading (once: no zone changes its offset twice that soon).
  let unchanged = after;
  let change = evenNext;
  while (change - unchanged > 1) {
    const middle = Math.floor((unchanged + change) / 2);
    if (offsetAt(zone, middle) === offset) unchanged = middle;
    else change = middle;
  }
  const [from, to] = [zone.wallAt(change - 1), zone.wallAt(change)];
  if (truncate(to, interval) > truncate(from, interval) || truncate(to, interval) === to) {
    return change;
  }
  return bucketAfter(zone, interval, change);
}

export interface TimelineRequest {
  interval: TimelineInterval;
  zone: Zone;
  startDatetime: string | undefined;
  endDatetime: string | undefined;
}

export interface TimelineRun {
  status: ExperimentStatus;
  startedAt: string | null;
  stoppedAt: string | null;
}

/**
 * The bucket bounds of the window (bucket starts, ascending, then the end of the last bucket: n
 * buckets have n + 1 bounds), widened to whole buckets: from the bucket holding the start
 * to the first bucket start past the end (so a session at the very end of the run, or now, is in
 * a bucket). A draft has no buckets. A problem is a 422 naming the parameter to change.
 */
export function timelineBounds(request: TimelineRequest, run: TimelineRun, now: number): number[] {
  if (run.status === 'draft' || run.startedAt === null) return [];
  const { interval, zone } = request;
  const start = Date.parse(request.startDatetime ?? run.startedAt);
  const end =
    request.endDatetime === undefined
      ? Date.parse(run.stoppedAt ?? new Date(now).toISOString()) + 1
      : Date.parse(request.endDatetime);
  if (end <= start) {
    const startName = request.startDatetime === undefined ? 'started_at' : 'start_datetime';
    throw new InputRuleError([
      {
        loc: ['query', request.endDatetime === undefined ? 'start_datetime' : 'end_datetime'],
        msg: `The window ends (${new Date(end).toISOString()}) before it starts (${startName} ${new Date(start).toISOString()}); send an end_datetime after the start.`,
        type: 'value_error',
      } satisfies InputProblem,
    ]);
  }
  let last = bucketStart(zone, interval, start);
  let lastWall = zone.wallAt(last);
  const bounds = [last];
  while (last < end) {
    const following = followingBuckets(zone, interval, last, lastWall);
    for (const next of following.starts) {
      if (last >= end) break;
      if (bounds.length > MAX_TIMELINE_BUCKETS) {
        throw new InputRuleError([
          {
            loc: ['query', 'end_datetime'],
            msg: `The window holds more than ${MAX_TIMELINE_BUCKETS} ${interval} buckets; narrow start_datetime and end_datetime${interval === 'hour' ? ' or use interval=day' : ''}.`,
            type: 'value_error',
          },
        ]);
      }
      bounds.push(next);
      last = next;
    }
    lastWall = following.lastWall;
  }
  return bounds;
}
