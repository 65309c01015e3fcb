import { nonPublicAddressOf } from './host-policy';

describe('nonPublicAddressOf', () => {
  it('names the class of an IP literal that is not public', async () => {
    expect(await nonPublicAddressOf('127.0.0.1')).toEqual({
      address: '127.0.0.1',
      kind: 'loopback',
    });
    expect(await nonPublicAddressOf('[::1]')).toEqual({ address: '::1', kind: 'loopback' });
    expect(await nonPublicAddressOf('10.1.2.3')).toEqual({ address: '10.1.2.3', kind: 'private' });
    expect(await nonPublicAddressOf('93.184.215.14')).toBeNull();
  });

  it('resolves a name and refuses it when any of its addresses is not public', async () => {
    const lookup = async () => [{ address: '93.184.215.14' }, { address: '169.254.169.254' }];
    expect(await nonPublicAddressOf('mixed.example', lookup)).toEqual({
      address: '169.254.169.254',
      kind: 'link-local',
    });
    expect(
      await nonPublicAddressOf('public.example', async () => [{ address: '8.8.8.8' }]),
    ).toBeNull();
  });

  it('checks what the system resolver answers for a real name', async () => {
    expect(await nonPublicAddressOf('localhost')).toMatchObject({ kind: 'loopback' });
  });

  it('lets a name that does not resolve through', async () => {
    const failing = async () => {
      throw new Error('ENOTFOUND');
    };
    expect(await nonPublicAddressOf('nowhere.invalid', failing)).toBeNull();
  });
});
