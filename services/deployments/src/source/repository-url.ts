import { isIP } from 'node:net';
import { classifyAddress, systemLookupHost, type LookupHost } from '@platform/shared';
import { SourceError } from './source-error';

/** A repository URL the fetch may use, and how git must reach it. */
export interface CheckedRepository {
  url: URL;
  /**
   * `http.curloptResolve` entries (`host:port:address`) that pin git's connection to the
   * addresses resolved (and checked) here, so a DNS answer that changes after the check cannot
   * lead inside. Made for every host name, with `allowLocal` too (one path, tested locally).
   */
  pinnedAddresses: string[];
}

const DEFAULT_PORTS: Record<string, string> = { 'https:': '443', 'http:': '80' };

/** What the log may show of a URL: never its credentials. */
export function displayUrl(repository: string): string {
  try {
    const url = new URL(repository);
    if (url.username || url.password) {
      url.username = '****';
      url.password = '';
    }
    return url.href;
  } catch {
    return repository.replace(/\/\/[^/@]*@/, '//****@');
  }
}

/**
 * Checks `repository` as the contract's service settings require, at the moment of fetching:
 * `https:` always, `http:` and `file:` only with `allowLocal` (SOURCE_ALLOW_LOCAL), no
 * credentials, and (unless `allowLocal`) a host whose every address is public (the webhook
 * rule, `classifyAddress`). Throws a `SourceError` ('refused' or 'unreachable') saying why.
 */
export async function checkRepository(
  repository: string,
  { allowLocal, lookupHost = systemLookupHost }: { allowLocal: boolean; lookupHost?: LookupHost },
): Promise<CheckedRepository> {
  const shown = displayUrl(repository);
  const refuse = (why: string) =>
    new SourceError('refused', `repository ${shown} is refused: ${why}`);
  let url: URL;
  try {
    url = new URL(repository);
  } catch {
    throw refuse('it is not a URL (https://host/path)');
  }
  const allowed = allowLocal ? ['https:', 'http:', 'file:'] : ['https:'];
  if (!allowed.includes(url.protocol)) {
    throw refuse(`the scheme ${url.protocol} is not allowed (${allowed.join(', ')} only)`);
  }
  if (url.username || url.password) throw refuse('credentials in the URL are not allowed');
  if (url.protocol === 'file:') {
    if (url.hostname !== '' && url.hostname !== 'localhost') {
      throw refuse('a file: URL names no host');
    }
    return { url, pinnedAddresses: [] };
  }
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  let addresses: string[];
  if (isIP(host)) {
    addresses = [host];
  } else {
    try {
      addresses = (await lookupHost(host)).map(({ address }) => address);
    } catch {
      addresses = [];
    }
    if (addresses.length === 0) {
      throw new SourceError('unreachable', `could not fetch ${shown}: ${host} does not resolve`);
    }
  }
  for (const address of allowLocal ? [] : addresses) {
    const kind = classifyAddress(address) ?? 'reserved';
    if (kind !== 'public') throw refuse(`${host} resolves to a ${kind} address (${address})`);
  }
  if (isIP(host)) return { url, pinnedAddresses: [] };
  const port = url.port || DEFAULT_PORTS[url.protocol]!;
  const listed = addresses.map((address) => (isIP(address) === 6 ? `[${address}]` : address));
  return { url, pinnedAddresses: [`${host}:${port}:${listed.join(',')}`] };
}
