import type { UseQueryResult } from '@tanstack/react-query';
import type { ReactNode } from 'react';
import { ErrorView } from './ErrorView';

/**
 * What a page shows of the query it is about: a status while it loads, the error with **Try
 * again**, then `children` with the data.
 */
export function Loaded<T>({
  query,
  loading,
  children,
}: {
  query: UseQueryResult<T>;
  loading: string;
  children: (data: T) => ReactNode;
}) {
  if (query.isPending) return <p role="status">{loading}</p>;
  if (query.isError) return <ErrorView error={query.error} retry={() => query.refetch()} />;
  return children(query.data);
}
