import { Link } from 'wouter';
import { ApiError } from '../api/client';

/** What went wrong, in words a person understands, with a way on: never a raw JSON dump. */
export function errorText(error: unknown): string {
  if (!(error instanceof ApiError)) {
    return error instanceof Error ? error.message : 'Something went wrong in the dashboard.';
  }
  switch (error.status) {
    case 0:
      return 'The platform did not answer. Check your connection and try again.';
    case 404:
      return 'Not found: it does not exist, or it was deleted.';
    case 409:
      return error.message;
    case 429:
      return error.retryAfter !== undefined
        ? `Too many requests. Try again in ${error.retryAfter} s.`
        : 'Too many requests. Try again in a moment.';
    case 503:
      return 'The platform is busy or restarting. Try again.';
    default:
      return error.status >= 500 ? 'The platform failed to answer. Try again.' : error.message;
  }
}

/** A failed page load: a 404 page, or the reason and a "Try again" button. */
export function ErrorView({ error, retry }: { error: unknown; retry?: () => void }) {
  if (error instanceof ApiError && error.status === 404) {
    return (
      <section className="panel" aria-labelledby="not-found-title">
        <h1 id="not-found-title">Not found</h1>
        <p>This page does not exist, or what it showed was deleted.</p>
        <Link href="/">Back to your projects</Link>
      </section>
    );
  }
  return <ErrorNotice error={error} retry={retry} />;
}

/** An error beside the control that caused it (role=alert: read out as it appears). */
export function ErrorNotice({ error, retry }: { error: unknown; retry?: () => void }) {
  if (!error) return null;
  return (
    <div className="notice error" role="alert">
      <span>{errorText(error)}</span>
      {retry && (
        <button type="button" onClick={retry}>
          Try again
        </button>
      )}
    </div>
  );
}
