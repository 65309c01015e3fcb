import { classifyAddress, type AddressClass } from './address-policy';

const cases: [string, AddressClass][] = [
  ['127.0.0.1', 'loopback'],
  ['127.255.255.254', 'loopback'],
  ['::1', 'loopback'],
  ['10.0.0.1', 'private'],
  ['10.255.255.255', 'private'],
  ['172.16.0.1', 'private'],
  ['172.31.255.255', 'private'],
  ['192.168.1.1', 'private'],
  ['fc00::1', 'private'],
  ['fd12:3456:789a::1', 'private'],
  ['100.64.0.1', 'shared'],
  ['100.127.255.255', 'shared'],
  ['169.254.169.254', 'link-local'],
  ['fe80::1', 'link-local'],
  ['febf::1', 'link-local'],
  ['224.0.0.1', 'multicast'],
  ['239.255.255.250', 'multicast'],
  ['ff02::1', 'multicast'],
  ['0.0.0.0', 'unspecified'],
  ['0.1.2.3', 'unspecified'],
  ['::', 'unspecified'],
  ['255.255.255.255', 'reserved'],
  ['240.0.0.1', 'reserved'],
  ['::ffff:127.0.0.1', 'loopback'],
  ['::ffff:7f00:1', 'loopback'],
  ['::ffff:10.1.2.3', 'private'],
  ['::ffff:a9fe:a9fe', 'link-local'],
  ['0:0:0:0:0:ffff:c0a8:0101', 'private'],
  ['64:ff9b::7f00:1', 'loopback'],
  ['::127.0.0.1', 'loopback'],
  ['[::1]', 'loopback'],
  ['8.8.8.8', 'public'],
  ['93.184.215.14', 'public'],
  ['172.15.255.255', 'public'],
  ['172.32.0.0', 'public'],
  ['100.63.255.255', 'public'],
  ['100.128.0.0', 'public'],
  ['11.0.0.0', 'public'],
  ['223.255.255.255', 'public'],
  ['2606:4700:4700::1111', 'public'],
  ['::ffff:8.8.8.8', 'public'],
  ['2001:db8::1', 'public'],
];

describe('address classification', () => {
  it.each(cases)('classifies %s as %s', (address, expected) => {
    expect(classifyAddress(address)).toBe(expected);
  });

  it('returns null for anything that is not an IP address', () => {
    for (const text of [
      'localhost',
      'example.com',
      '127.0.0',
      '256.0.0.1',
      '1::2::3',
      'fe80::zz',
      '',
    ]) {
      expect(classifyAddress(text)).toBeNull();
    }
  });

  // WHATWG URL parsing turns every IPv4 spelling into the dotted form before we classify it.
  it.each([
    ['http://2130706433/', '127.0.0.1'],
    ['http://0x7f000001/', '127.0.0.1'],
    ['http://0x7f.0.0.1/', '127.0.0.1'],
    ['http://0177.0.0.1/', '127.0.0.1'],
    ['http://017700000001/', '127.0.0.1'],
    ['http://127.1/', '127.0.0.1'],
    ['http://0/', '0.0.0.0'],
    ['http://3232235777/', '192.168.1.1'],
    ['http://0xA9FEA9FE/', '169.254.169.254'],
    ['http://[::ffff:127.0.0.1]/', '[::ffff:7f00:1]'],
  ])('sees %s as host %s once parsed as a URL', (url, host) => {
    const hostname = new URL(url).hostname;
    expect(hostname).toBe(host);
    expect(classifyAddress(hostname)).not.toBe('public');
  });
});
