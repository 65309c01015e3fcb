import { deletedNameKeyOf, nameKeyOf } from './name-key';
import { nameSchema } from './named-resources.schemas';

describe('nameKeyOf', () => {
  it('makes names that differ only in letter case share one key', () => {
    expect(nameKeyOf('Billing API')).toBe(nameKeyOf('billing api'));
    expect(nameKeyOf('ÉCOLE')).toBe(nameKeyOf('école'));
  });

  it('treats composed and decomposed accents as the same name', () => {
    const composed = 'caf\u00e9';
    const decomposed = 'cafe\u0301';
    expect(composed).not.toBe(decomposed);
    expect(nameKeyOf(composed)).toBe(nameKeyOf(decomposed));
  });

  it('ignores surrounding white space, so the key is the same however the name arrived', () => {
    expect(nameKeyOf('  Billing API ')).toBe(nameKeyOf('billing api'));
  });

  it('keeps names that differ in more than case apart', () => {
    expect(nameKeyOf('api-v1')).not.toBe(nameKeyOf('api-v2'));
    expect(nameKeyOf('a b')).not.toBe(nameKeyOf('ab'));
  });
});

describe('deletedNameKeyOf', () => {
  it('differs per id, so any number of deleted documents can hold one', () => {
    expect(deletedNameKeyOf('a'.repeat(24))).not.toBe(deletedNameKeyOf('b'.repeat(24)));
  });

  it('can never equal the key of a valid name', () => {
    const key = deletedNameKeyOf('0123456789abcdef01234567');
    const lookalike = key.replace('\u0000', '');
    expect(nameSchema.safeParse(key).success).toBe(false);
    expect(nameKeyOf(nameSchema.parse(lookalike))).not.toBe(key);
  });
});

describe('nameSchema', () => {
  it('trims the name', () => {
    expect(nameSchema.parse('  web  ')).toBe('web');
  });

  it('accepts 1 to 100 characters after trimming', () => {
    expect(nameSchema.parse('x')).toBe('x');
    expect(nameSchema.parse(` ${'x'.repeat(100)} `)).toHaveLength(100);
    expect(nameSchema.safeParse('x'.repeat(101)).success).toBe(false);
    expect(nameSchema.safeParse('   ').success).toBe(false);
  });

  it('refuses control characters and anything but a string', () => {
    for (const value of ['a\u0000b', 'line\nbreak', 42, null, { $gt: '' }, ['a']]) {
      expect(nameSchema.safeParse(value).success).toBe(false);
    }
  });
});
