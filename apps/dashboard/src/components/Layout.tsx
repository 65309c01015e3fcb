import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import type { ReactNode } from 'react';
import { Link, useLocation } from 'wouter';
import { api, call } from '../api/client';
import { SIGN_IN_PATH } from '../lib/navigation';
import { ErrorNotice } from './ErrorView';

export const meQuery = { queryKey: ['me'], queryFn: () => call(api.GET('/api/accounts/me')) };

/** Every signed-in page: the header (home, the account, sign out), then the page. */
export function Layout({ children }: { children: ReactNode }) {
  const me = useQuery(meQuery);
  const queryClient = useQueryClient();
  const [, navigate] = useLocation();
  const signOut = useMutation({
    mutationFn: () => call(api.POST('/api/accounts/logout')),
    onSuccess: () => {
      queryClient.clear();
      navigate(SIGN_IN_PATH, { replace: true });
    },
  });
  return (
    <>
      <a className="skip" href="#main">
        Skip to content
      </a>
      <header className="top">
        <Link href="/" className="brand">
          Platform
        </Link>
        <nav aria-label="Account">
          {me.data && <span className="who">{me.data.name}</span>}
          <button type="button" onClick={() => signOut.mutate()} disabled={signOut.isPending}>
            Sign out
          </button>
        </nav>
      </header>
      <ErrorNotice error={signOut.error} />
      <main id="main" tabIndex={-1}>
        {children}
      </main>
    </>
  );
}
