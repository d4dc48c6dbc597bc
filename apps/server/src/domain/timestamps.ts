// Timestamps are stored and sent as fixed-width ISO 8601 UTC text with milliseconds
// (`2026-03-17T07:22:20.252Z`), so text order is time order and a prefix is a period.

const DATE_TIME_WITH_ZONE =
  /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/i;

/** The canonical text of a date-time that carries `Z` or an offset, or null if it is not one. */
export function normalizeDateTime(input: string): string | null {
  if (!DATE_TIME_WITH_ZONE.test(input)) return null;
  const time = Date.parse(input);
  if (Number.isNaN(time)) return null;
  const date = new Date(time);
  if (date.getUTCFullYear() < 0 || date.getUTCFullYear() > 9999) return null;
  return date.toISOString();
}

export function nowIso(): string {
  return new Date().toISOString();
}
