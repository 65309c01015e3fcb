import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useEffect, useRef, useState, type FormEvent } from 'react';
import { useLocation, useSearch } from 'wouter';
import { ErrorNotice } from '../components/ErrorView';
import { Field } from '../components/Field';
import { safeNext } from '../lib/navigation';
import { devCredential, logIn, showGoogleButton, signInSettings } from '../lib/sign-in';

/** Sign in: the development identity provider locally, Google's button in production. */
export function SignInPage() {
  const settings = signInSettings();
  const next = safeNext(new URLSearchParams(useSearch()).get('next'));
  const [, navigate] = useLocation();
  const queryClient = useQueryClient();
  const [email, setEmail] = useState('');
  const [name, setName] = useState('');
  const googleButton = useRef<HTMLDivElement>(null);

  const signIn = useMutation({
    mutationFn: async (credential: string | undefined) =>
      logIn(credential ?? (await devCredential(settings.devIdpPath!, email, name))),
    onSuccess: () => {
      queryClient.clear();
      navigate(next, { replace: true });
    },
  });
  const { mutate } = signIn;
  const [googleError, setGoogleError] = useState<Error | null>(null);

  useEffect(() => {
    document.title = 'Sign in · Platform';
    if (settings.devIdpPath || !settings.googleClientId || !googleButton.current) return;
    showGoogleButton(googleButton.current, settings.googleClientId, mutate, setGoogleError);
  }, [settings.devIdpPath, settings.googleClientId, mutate]);

  const submit = (event: FormEvent) => {
    event.preventDefault();
    mutate(undefined);
  };

  return (
    <main id="main" className="sign-in">
      <h1>Sign in to Platform</h1>
      {settings.devIdpPath ? (
        <form onSubmit={submit} aria-describedby="dev-note">
          <p id="dev-note" className="hint">
            Development sign-in: any e-mail address, no password. Never available in production.
          </p>
          <Field
            label="E-mail"
            type="email"
            required
            autoComplete="email"
            value={email}
            onChange={(e) => setEmail(e.target.value)}
          />
          <Field
            label="Name"
            required
            maxLength={100}
            autoComplete="name"
            value={name}
            onChange={(e) => setName(e.target.value)}
          />
          <button type="submit" className="primary" disabled={signIn.isPending}>
            Sign in
          </button>
        </form>
      ) : settings.googleClientId ? (
        <div ref={googleButton} aria-label="Sign in with Google" />
      ) : (
        <p>No sign-in is configured on this platform (GOOGLE_CLIENT_ID).</p>
      )}
      <ErrorNotice error={signIn.error ?? googleError} />
    </main>
  );
}
