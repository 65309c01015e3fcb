import type { ApiClient } from './api-client';

/** What every list item has at least. */
export interface ListItem {
  id: string;
  name: string;
  createdAt: string;
}

/**
 * Follows nextCursor from the first page of the list at `path` (its items under `key`) to the
 * last; returns every page's items. `beforeEachPage` runs before each request.
 */
export async function readAllPages(
  client: ApiClient,
  list: { path: string; key: string },
  limit: number,
  beforeEachPage?: (page: number) => Promise<void>,
): Promise<ListItem[][]> {
  const pages: ListItem[][] = [];
  let cursor: string | undefined;
  do {
    await beforeEachPage?.(pages.length);
    const query = cursor
      ? `?limit=${limit}&cursor=${encodeURIComponent(cursor)}`
      : `?limit=${limit}`;
    const response = await client.get(`${list.path}${query}`);
    expect(response.status).toBe(200);
    pages.push(response.body[list.key]);
    cursor = response.body.nextCursor;
  } while (cursor);
  return pages;
}
