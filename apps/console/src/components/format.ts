// How times and numbers read in the console: in the browser's own time zone and language.

/** The browser's IANA time zone, which the timeline's buckets follow. */
export const TIME_ZONE = Intl.DateTimeFormat().resolvedOptions().timeZone;

const dateTime = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'medium' });

export function formatTime(iso: string | null | undefined): string {
  return iso ? dateTime.format(new Date(iso)) : '—';
}

export function formatPercent(share: number): string {
  return `${(share * 100).toFixed(1)}%`;
}
