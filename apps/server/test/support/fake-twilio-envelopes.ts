// Twilio's paging envelopes (v2010 and v1) and its error body, for the fake Twilio
// (fake-twilio.ts).

import { twilioSid } from './fake-twilio-resources.js';

const DEFAULT_PAGE_SIZE = 50;
export const MAX_PAGE_SIZE = 1000;

const ERROR_TEXT: Record<number, { code: number; message: string }> = {
  400: { code: 20001, message: 'Bad Request' },
  401: { code: 20003, message: 'Authenticate' },
  403: { code: 20403, message: 'Forbidden' },
  404: { code: 20404, message: 'The requested resource was not found' },
  405: { code: 20004, message: 'Method not allowed' },
  429: { code: 20429, message: 'Too Many Requests' },
  500: { code: 20500, message: 'Internal Server Error' },
  503: { code: 20503, message: 'Service Unavailable' },
};

export function errorBody(status: number, message?: string) {
  const known = ERROR_TEXT[status] ?? { code: 20500, message: 'Internal Server Error' };
  return {
    code: known.code,
    message: message ?? known.message,
    more_info: `https://www.twilio.com/docs/errors/${known.code}`,
    status,
  };
}

interface Page<T> {
  items: T[];
  page: number;
  pageSize: number;
  hasNext: boolean;
}

export function pageOf<T>(all: readonly T[], query: URLSearchParams, maxPageSize: number): Page<T> {
  const requested = Number(query.get('PageSize') ?? DEFAULT_PAGE_SIZE);
  const pageSize = Math.max(1, Math.min(requested, MAX_PAGE_SIZE, maxPageSize));
  const page = Number(query.get('Page') ?? 0);
  const start = page * pageSize;
  return {
    items: all.slice(start, start + pageSize),
    page,
    pageSize,
    hasNext: start + pageSize < all.length,
  };
}

/** `path?query` of page `page`; later pages carry an opaque PageToken, as Twilio's do. */
function pageLink(path: string, filters: Record<string, string>, pageSize: number, page: number) {
  const query = new URLSearchParams({ ...filters, PageSize: String(pageSize), Page: String(page) });
  if (page > 0) query.set('PageToken', twilioSid('PA', page));
  return `${path}?${query.toString()}`;
}

/** The v2010 envelope: links relative to the host, paging fields at the top. */
export function v2010Envelope<T>(
  key: string,
  path: string,
  filters: Record<string, string>,
  page: Page<unknown>,
  items: T[],
) {
  const link = (n: number) => pageLink(path, filters, page.pageSize, n);
  const start = page.page * page.pageSize;
  return {
    first_page_uri: link(0),
    end: Math.max(start, start + items.length - 1),
    previous_page_uri: page.page > 0 ? link(page.page - 1) : null,
    [key]: items,
    uri: link(page.page),
    page_size: page.pageSize,
    start,
    next_page_uri: page.hasNext ? link(page.page + 1) : null,
    page: page.page,
  };
}

/** The v1 envelope: absolute links inside `meta`. */
export function v1Envelope<T>(
  baseUrl: string,
  key: string,
  path: string,
  page: Page<unknown>,
  items: T[],
) {
  const link = (n: number) => `${baseUrl}${pageLink(path, {}, page.pageSize, n)}`;
  return {
    [key]: items,
    meta: {
      page: page.page,
      page_size: page.pageSize,
      first_page_url: link(0),
      previous_page_url: page.page > 0 ? link(page.page - 1) : null,
      url: link(page.page),
      next_page_url: page.hasNext ? link(page.page + 1) : null,
      key,
    },
  };
}
