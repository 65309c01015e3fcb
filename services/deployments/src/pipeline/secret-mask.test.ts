import { MASK, SecretMask } from './secret-mask';

/** Feeds `chunks` through a mask of `secrets`: what the log shows, flushed at the end. */
function masked(secrets: string[], chunks: string[]): string {
  const mask = new SecretMask(secrets);
  return chunks.map((c) => mask.write(c)).join('') + mask.flush();
}

describe('SecretMask', () => {
  it('replaces every occurrence of every secret', () => {
    expect(masked(['s3cret', 'tok-1'], ['a=s3cret b=tok-1 again s3cret\n'])).toBe(
      `a=${MASK} b=${MASK} again ${MASK}\n`,
    );
  });

  it('masks a value split across chunks at every possible place', () => {
    const line = 'TOKEN=abcdef123 done\n';
    for (let i = 0; i <= line.length; i++) {
      for (let j = i; j <= line.length; j++) {
        const chunks = [line.slice(0, i), line.slice(i, j), line.slice(j)];
        expect(masked(['abcdef123'], chunks)).toBe(`TOKEN=${MASK} done\n`);
      }
    }
  });

  it('never lets a part of a value out before it knows it is not one', () => {
    const mask = new SecretMask(['hunter2']);
    expect(mask.write('password: hun')).toBe('password: ');
    expect(mask.write('t')).toBe('');
    expect(mask.write('er')).toBe('');
    expect(mask.write('2!\n')).toBe(`${MASK}!\n`);
  });

  it('lets a held start go once the output shows it is not a value', () => {
    const mask = new SecretMask(['hunter2']);
    expect(mask.write('the hunt')).toBe('the ');
    expect(mask.write('ing season\n')).toBe('hunting season\n');
    expect(mask.flush()).toBe('');
  });

  it('masks the longest of overlapping values whole', () => {
    expect(masked(['abc', 'abcdef'], ['x abcdef y abc\n'])).toBe(`x ${MASK} y ${MASK}\n`);
  });

  it('passes output through untouched without secrets, and ignores empty values', () => {
    expect(masked([], ['plain ', 'output\n'])).toBe('plain output\n');
    expect(masked([''], ['plain\n'])).toBe('plain\n');
  });
});
