/**
 * Heuristics for "this looks like a real secret": the formats of well-known credentials,
 * passwords inside URLs, long random-looking strings, and secret-named values that do not say
 * they are fake.
 */

const KNOWN_FORMATS: [string, RegExp][] = [
  ['a private key', /-----BEGIN [A-Z ]*PRIVATE KEY-----/],
  ['an AWS access key id', /\b(AKIA|ASIA)[0-9A-Z]{16}\b/],
  ['a GitHub token', /\b(gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})\b/],
  ['a Slack token', /\bxox[abprs]-[A-Za-z0-9-]{10,}/],
  ['a Google API key', /\bAIza[0-9A-Za-z_-]{35}\b/],
  ['a Stripe live key', /\b[sr]k_live_[0-9A-Za-z]{16,}/],
  ['a webhook signing secret', /\bwhsec_[A-Za-z0-9+/]{20,}/],
  ['a JSON Web Token', /\beyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]+/],
  ['an npm token', /\bnpm_[A-Za-z0-9]{36}\b/],
];

/** Words that mark a value as a development stand-in or a placeholder. */
const FAKE_MARKERS =
  /dev|development|local|example|placeholder|fake|insecure|not-for-production|change-?me|replace|<[^>]+>/i;

/** Bits per character: random base64 is about 6, English-like text and repeats far less. */
export function shannonEntropy(text: string): number {
  const counts = new Map<string, number>();
  for (const ch of text) counts.set(ch, (counts.get(ch) ?? 0) + 1);
  let entropy = 0;
  for (const count of counts.values()) {
    const p = count / text.length;
    entropy -= p * Math.log2(p);
  }
  return entropy;
}

/** Runs of 24+ token characters that look random (high entropy, letters and digits mixed). */
function randomLookingTokens(text: string): string[] {
  return (text.match(/[A-Za-z0-9+/=_]{24,}/g) ?? []).filter(
    (token) =>
      shannonEntropy(token) >= 4.2 &&
      /[a-z]/.test(token) &&
      /[A-Z]/.test(token) &&
      /[0-9]/.test(token),
  );
}

/** Reasons `text` (a whole file) seems to contain a real credential; [] if none. */
export function secretsInText(text: string): string[] {
  const findings: string[] = [];
  for (const [what, pattern] of KNOWN_FORMATS) {
    const match = pattern.exec(text);
    if (match) findings.push(`${what}: ${match[0].slice(0, 12)}...`);
  }
  // scheme://user:password@host with a password that is not a <placeholder>.
  for (const match of text.matchAll(/[a-z][a-z0-9+.-]*:\/\/[^\s:/@'"]*:([^\s@'"/]+)@/gi)) {
    if (!FAKE_MARKERS.test(match[1]!)) findings.push(`a password in a URL: ${match[0]}`);
  }
  for (const token of randomLookingTokens(text)) {
    findings.push(`a random-looking string: ${token.slice(0, 8)}...`);
  }
  return findings;
}

/** Reasons a value stored under a secret's key is not an obvious stand-in; [] if it is one. */
export function realLookingSecretValue(key: string, value: string): string[] {
  const findings = secretsInText(value);
  if (
    /SECRET|PASSWORD|PASSWD|TOKEN|PRIVATE_KEY|API_KEY|CREDENTIAL/i.test(key) &&
    !FAKE_MARKERS.test(value)
  ) {
    findings.push(`${key} does not say it is a development or placeholder value`);
  }
  return findings;
}
