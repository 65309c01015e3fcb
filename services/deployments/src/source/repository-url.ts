import { isIP } from 'node:net';
import { fileURLToPath, pathToFileURL } from 'node:url';
import {
  allowsLocalFiles,
  allowsLocalNetwork,
  checkLocalRepository,
  classifyAddress,
  systemLookupHost,
  type LocalSourcePolicy,
  type LookupHost,
} from '@platform/shared';
import { SourceError } from './source-error';

/** A repository URL the fetch may use, and how git must reach it. */
export interface CheckedRepository {
  /** What git is given: for a `file:` URL, the real path checked (symlinks resolved). */
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
 * `https:` always; `http:` and hosts with non-public addresses (the webhook rule,
 * `classifyAddress`) only with SOURCE_ALLOW_LOCAL=true; `file:` with SOURCE_ALLOW_LOCAL=true or a
 * directory, its real path (symlinks resolved now) inside that directory and never in the
 * platform's own files (`checkLocalRepository`); no credentials. Throws a `SourceError`
 * ('refused' or 'unreachable') saying why.
 */
export async function checkRepository(
  repository: string,
  {
    sources,
    lookupHost = systemLookupHost,
  }: { sources: LocalSourcePolicy; lookupHost?: LookupHost },
): Promise<CheckedRepository> {
  const allowLocal = allowsLocalNetwork(sources.setting);
  const shown = displayUrl(repository);
  const refuse = (why: string) =>
    new SourceError('refused', `repository ${shown} is refused: ${why}`);
  let url: URL;
  try {
    url = new URL(repository);
  } catch {
    throw refuse('it is not a URL (https://host/path)');
  }
  const allowed = [
    'https:',
    ...(allowLocal ? ['http:'] : []),
    ...(allowsLocalFiles(sources.setting) ? ['file:'] : []),
  ];
  if (!allowed.includes(url.protocol)) {
    throw refuse(`the scheme ${url.protocol} is not allowed (${allowed.join(', ')} only)`);
  }
  if (url.username || url.password) throw refuse('credentials in the URL are not allowed');
  if (url.protocol === 'file:') {
    if (url.hostname !== '' && url.hostname !== 'localhost') {
      throw refuse('a file: URL names no host');
    }
    const local = await checkLocalRepository(sources, fileURLToPath(url));
    if ('problem' in local) throw refuse(local.problem);
    // git reads the directory just checked, not whatever a symlink leads to later.
    return { url: pathToFileURL(local.realPath), pinnedAddresses: [] };
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
