import { api, call } from '../api/client';

/** The gateway writes these into the page (services/gateway/src/dashboard). */
const meta = (name: string) =>
  document.querySelector<HTMLMetaElement>(`meta[name="${name}"]`)?.content || undefined;

export const signInSettings = () => ({
  devIdpPath: meta('platform-dev-idp'),
  googleClientId: meta('platform-google-client-id'),
});

function randomToken(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
}

/**
 * Google Identity Services' double submit: the same random value as the g_csrf_token cookie and
 * in the body of the login callback, which starts the session (an httpOnly cookie).
 */
export async function logIn(credential: string): Promise<void> {
  const csrfToken = randomToken();
  document.cookie = `g_csrf_token=${csrfToken}; path=/; SameSite=Lax`;
  await call(
    api.POST('/api/accounts/google-auth-login-callback', { body: { credential, csrfToken } }),
  );
}

/** The development identity provider mints a Google-format ID token for any name and e-mail. */
export async function devCredential(devIdpPath: string, email: string, name: string) {
  const response = await fetch(`${devIdpPath}token`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email, name }),
  });
  if (!response.ok)
    throw new Error(`The development identity provider answered ${response.status}.`);
  const { credential } = (await response.json()) as { credential: string };
  return credential;
}

interface GoogleId {
  initialize(options: { client_id: string; callback: (r: { credential: string }) => void }): void;
  renderButton(element: HTMLElement, options: Record<string, string>): void;
}

/** Loads Google's sign-in script (allowed by the page's CSP) and shows its button in `element`. */
export function showGoogleButton(
  element: HTMLElement,
  clientId: string,
  onCredential: (credential: string) => void,
  onError: (error: Error) => void,
): void {
  const script = document.createElement('script');
  script.src = 'https://accounts.google.com/gsi/client';
  script.async = true;
  script.onload = () => {
    const google = (window as unknown as { google?: { accounts: { id: GoogleId } } }).google;
    if (!google) return onError(new Error('Google sign-in did not load.'));
    google.accounts.id.initialize({
      client_id: clientId,
      callback: (r) => onCredential(r.credential),
    });
    google.accounts.id.renderButton(element, {
      theme: 'outline',
      size: 'large',
      text: 'signin_with',
    });
  };
  script.onerror = () => onError(new Error('Google sign-in could not be reached.'));
  document.head.append(script);
}
