import { EgressGuard, EgressRefusedError, type ResolveHost } from './egress-guard';

const fakeDns =
  (answers: Record<string, string[]>): ResolveHost =>
  async (hostname) => {
    const addresses = answers[hostname];
    if (!addresses)
      throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
    return addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };

const refusal = (promise: Promise<unknown>) =>
  promise.then(
    () => null,
    (err: unknown) => (err instanceof EgressRefusedError ? err.addressClass : err),
  );

describe('egress guard at registration', () => {
  const guard = new EgressGuard({
    allowPrivate: false,
    resolveHost: fakeDns({
      'hooks.example.test': ['93.184.215.14'],
      'inside.example.test': ['10.0.0.5'],
      'mixed.example.test': ['93.184.215.14', '192.168.0.9'],
      'v6.example.test': ['::1'],
    }),
  });

  it.each([
    ['http://127.0.0.1/', 'loopback'],
    ['http://2130706433/', 'loopback'],
    ['http://0x7f000001/', 'loopback'],
    ['http://0177.0.0.1/', 'loopback'],
    ['http://[::1]:8080/', 'loopback'],
    ['http://[::ffff:127.0.0.1]/', 'loopback'],
    ['https://10.1.2.3/', 'private'],
    ['https://172.20.0.1/', 'private'],
    ['https://192.168.0.1/', 'private'],
    ['https://[fd00::1]/', 'private'],
    ['https://100.64.1.1/', 'shared'],
    ['http://169.254.169.254/latest/meta-data', 'link-local'],
    ['http://[fe80::1]/', 'link-local'],
    ['http://224.0.0.251/', 'multicast'],
    ['http://[ff02::1]/', 'multicast'],
    ['http://0.0.0.0/', 'unspecified'],
    ['http://[::]/', 'unspecified'],
    ['http://inside.example.test/', 'private'],
    ['http://mixed.example.test/', 'private'],
    ['http://v6.example.test/', 'loopback'],
  ])('refuses %s as a %s address', async (url, expected) => {
    expect(await refusal(guard.assertUrlAllowed(new URL(url)))).toBe(expected);
  });

  it('accepts a public address and a name that resolves to one', async () => {
    expect(await refusal(guard.assertUrlAllowed(new URL('https://93.184.215.14/hook')))).toBeNull();
    expect(
      await refusal(guard.assertUrlAllowed(new URL('https://hooks.example.test/hook'))),
    ).toBeNull();
  });

  it('lets a name that does not resolve through, to be checked again when dialled', async () => {
    expect(
      await refusal(guard.assertUrlAllowed(new URL('https://nowhere.example.test/'))),
    ).toBeNull();
  });

  it('allows every address when private delivery is allowed', async () => {
    const permissive = new EgressGuard({ allowPrivate: true, resolveHost: fakeDns({}) });
    expect(await refusal(permissive.assertUrlAllowed(new URL('http://127.0.0.1/')))).toBeNull();
    expect(() => permissive.assertAddressAllowed('10.0.0.1')).not.toThrow();
  });

  it('explains a refusal without echoing the resolved address', async () => {
    const err = await guard
      .assertUrlAllowed(new URL('http://inside.example.test/'))
      .catch((e: Error) => e);
    expect((err as Error).message).toBe(
      'refused: the destination is a private address, which webhooks may not reach',
    );
  });
});

describe('egress guard at dial time', () => {
  const guard = new EgressGuard({
    allowPrivate: false,
    resolveHost: fakeDns({
      'public.example.test': ['93.184.215.14', '2606:4700::1'],
      localhost: ['127.0.0.1'],
    }),
  });

  const lookupOf = (url: string) => guard.dialOptions(new URL(url)).lookup;

  const lookup = (url: string, options: { all?: boolean; family?: number }) =>
    new Promise<{ err: NodeJS.ErrnoException | null; address: unknown; family?: number }>(
      (resolve) => {
        lookupOf(url)(new URL(url).hostname, options, (err, address, family) =>
          resolve({ err, address, family }),
        );
      },
    );

  it('refuses an IP-literal host before any lookup (node does not look literals up)', () => {
    expect(() => guard.dialOptions(new URL('http://2130706433:8080/'))).toThrow(EgressRefusedError);
    expect(() => guard.dialOptions(new URL('http://[::1]/'))).toThrow(EgressRefusedError);
  });

  it('fails the lookup of a name that resolves to a loopback address', async () => {
    const result = await lookup('http://localhost:8080/', {});
    expect(result.err).toBeInstanceOf(EgressRefusedError);
  });

  it.each([
    ['10.1.2.3', 'private'],
    ['172.16.0.9', 'private'],
    ['192.168.0.9', 'private'],
    ['fd00::9', 'private'],
    ['100.64.0.9', 'shared'],
    ['169.254.169.254', 'link-local'],
    ['fe80::9', 'link-local'],
    ['224.0.0.9', 'multicast'],
    ['ff02::9', 'multicast'],
    ['0.0.0.0', 'unspecified'],
    ['::', 'unspecified'],
    ['::ffff:10.1.2.3', 'private'],
  ])(
    'refuses %s (%s) as a literal and as a resolved name, before any socket',
    async (address, kind) => {
      const dialGuard = new EgressGuard({
        allowPrivate: false,
        resolveHost: async () => [{ address, family: address.includes(':') ? 6 : 4 }],
      });
      const literal = address.includes(':') ? `[${address}]` : address;

      let literalError: unknown;
      try {
        dialGuard.dialOptions(new URL(`http://${literal}/`));
      } catch (err) {
        literalError = err;
      }
      const lookupError = await new Promise<unknown>((resolve) => {
        dialGuard
          .dialOptions(new URL('http://inside.example.test/'))
          .lookup('inside.example.test', { all: true }, (err) => resolve(err));
      });

      expect(literalError).toBeInstanceOf(EgressRefusedError);
      expect((literalError as EgressRefusedError).addressClass).toBe(kind);
      expect(lookupError).toBeInstanceOf(EgressRefusedError);
      expect((lookupError as EgressRefusedError).addressClass).toBe(kind);
    },
  );

  it('answers a single-address lookup with the first allowed address', async () => {
    expect(await lookup('http://public.example.test/', {})).toEqual({
      err: null,
      address: '93.184.215.14',
      family: 4,
    });
    expect(await lookup('http://public.example.test/', { family: 6 })).toEqual({
      err: null,
      address: '2606:4700::1',
      family: 6,
    });
  });

  it('answers an all-addresses lookup with every address', async () => {
    const result = await lookup('http://public.example.test/', { all: true });
    expect(result.address).toEqual([
      { address: '93.184.215.14', family: 4 },
      { address: '2606:4700::1', family: 6 },
    ]);
  });
});
