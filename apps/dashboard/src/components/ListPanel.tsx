import { useId, type ReactNode } from 'react';
import { ErrorView } from './ErrorView';

/** What a list's query says of itself (a TanStack Query result, paged or not). */
interface ListQuery {
  isPending: boolean;
  isError: boolean;
  isSuccess: boolean;
  error: unknown;
  refetch: () => unknown;
}

/**
 * A panel that lists what a query returns: its heading (the list's name too), the query's loading
 * and error states, a sentence when there is nothing, a row per item, and what goes with them
 * before (a form, a filter) and after (a form, **Show more**).
 */
export function ListPanel<T>({
  title,
  label = title,
  query,
  items,
  empty = `No ${title.toLowerCase()} yet.`,
  loading,
  live,
  before,
  after,
  children,
}: {
  title: string;
  /** The list's accessible name, if not the title. */
  label?: string;
  query: ListQuery;
  /** The rows' items (undefined while unknown). */
  items: T[] | undefined;
  empty?: string;
  /** Said while the first answer is awaited. */
  loading?: string;
  /** Announce changes to the rows (aria-live polite). */
  live?: boolean;
  before?: ReactNode;
  after?: ReactNode;
  children: (item: T) => ReactNode;
}) {
  const titleId = useId();
  return (
    <section className="panel" aria-labelledby={titleId}>
      <h2 id={titleId}>{title}</h2>
      {before}
      {loading && query.isPending && <p role="status">{loading}</p>}
      {query.isError && <ErrorView error={query.error} retry={() => query.refetch()} />}
      {query.isSuccess && items?.length === 0 && <p>{empty}</p>}
      <ul className="rows" aria-label={label} aria-live={live ? 'polite' : undefined}>
        {items?.map(children)}
      </ul>
      {after}
    </section>
  );
}

/** A paged list's button for its next page (`busyLabel` while it loads, if given). */
export function MoreButton({
  pages,
  label,
  busyLabel,
}: {
  pages: { hasNextPage: boolean; isFetchingNextPage: boolean; fetchNextPage: () => unknown };
  label: string;
  busyLabel?: string;
}) {
  if (!pages.hasNextPage) return null;
  return (
    <button type="button" onClick={() => pages.fetchNextPage()} disabled={pages.isFetchingNextPage}>
      {pages.isFetchingNextPage && busyLabel ? busyLabel : label}
    </button>
  );
}
