import { createHash } from 'node:crypto';

// The page is served through the gateway at /dev/ so that the g_csrf_token cookie and the
// session cookie belong to the gateway's origin. `token` is relative (→ /dev/token there,
// /token on dev-idp itself); the /api calls only make sense on the gateway's origin.
const SCRIPT = `
const $ = (id) => document.getElementById(id);

function randomToken() {
  const bytes = new Uint8Array(16);
  crypto.getRandomValues(bytes);
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
}

async function call(method, url, body) {
  const response = await fetch(url, {
    method,
    credentials: 'same-origin',
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  let data = text;
  try { data = JSON.parse(text); } catch {}
  if (!response.ok) {
    const reason = data && data.error ? data.error + ': ' + data.message : text;
    throw new Error(method + ' ' + url + ' → ' + response.status + ' ' + reason);
  }
  return data;
}

async function showAccount() {
  $('me').textContent = JSON.stringify(await call('GET', '/api/accounts/me'), null, 2);
  $('projects').textContent = JSON.stringify(await call('GET', '/api/projects'), null, 2);
}

async function signIn(event) {
  event.preventDefault();
  $('error').textContent = '';
  try {
    const { credential } = await call('POST', 'token', { email: $('email').value, name: $('name').value });
    // Google Identity Services' double submit: the same random value as cookie and in the body.
    const csrfToken = randomToken();
    document.cookie = 'g_csrf_token=' + csrfToken + '; path=/; SameSite=Lax';
    await call('POST', '/api/accounts/google-auth-login-callback', { credential, csrfToken });
    await showAccount();
  } catch (err) {
    $('error').textContent = err.message;
  }
}

async function signOut() {
  $('error').textContent = '';
  try {
    await call('POST', '/api/accounts/logout');
    $('me').textContent = '';
    $('projects').textContent = '';
  } catch (err) {
    $('error').textContent = err.message;
  }
}

$('sign-in-form').addEventListener('submit', signIn);
$('sign-out').addEventListener('click', signOut);
showAccount().catch(() => {});
`;

const STYLE = `
body { font-family: system-ui, sans-serif; max-width: 40rem; margin: 2rem auto; padding: 0 1rem; }
label { display: block; margin: 0.5rem 0; }
input { width: 100%; padding: 0.3rem; }
pre { background: #f4f4f4; padding: 0.5rem; min-height: 1.5rem; white-space: pre-wrap; }
#error { color: #b00020; }
`;

export const SIGN_IN_PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Development sign-in</title>
<style>${STYLE}</style>
</head>
<body>
<h1>Development sign-in</h1>
<p>Signs in with a Google-format ID token minted by dev-idp. Never available in production.</p>
<form id="sign-in-form">
  <label>E-mail <input id="email" type="email" required autocomplete="email"></label>
  <label>Name <input id="name" type="text" required maxlength="100" autocomplete="name"></label>
  <button id="sign-in" type="submit">Sign in</button>
  <button id="sign-out" type="button">Sign out</button>
</form>
<p id="error" role="alert"></p>
<h2>GET /api/accounts/me</h2>
<pre id="me"></pre>
<h2>GET /api/projects</h2>
<pre id="projects"></pre>
<script>${SCRIPT}</script>
</body>
</html>
`;

const sha256 = (text: string) => `'sha256-${createHash('sha256').update(text).digest('base64')}'`;

/**
 * Allows exactly this page's inline script and style. Sent with the page, it replaces the
 * gateway's default policy (which forbids inline scripts) on the proxied response.
 */
export const SIGN_IN_PAGE_CSP = [
  "default-src 'none'",
  `script-src ${sha256(SCRIPT)}`,
  `style-src ${sha256(STYLE)}`,
  "connect-src 'self'",
  "form-action 'self'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
].join('; ');
