import { navigate } from 'wouter/use-browser-location';

export const SIGN_IN_PATH = '/sign-in';

/** Only a path on this origin is a place to go back to after sign-in (never `//host`). */
export function safeNext(next: string | null): string {
  if (!next || !next.startsWith('/') || next.startsWith('//') || next.startsWith('/\\')) return '/';
  return next;
}

/** To the sign-in page, remembering where the person was. */
export function goToSignIn(): void {
  const here = window.location.pathname + window.location.search;
  if (window.location.pathname === SIGN_IN_PATH) return;
  navigate(`${SIGN_IN_PATH}?next=${encodeURIComponent(here)}`, { replace: true });
}
