import { completeUtf8Length } from './release-log';

describe('completeUtf8Length', () => {
  const bytes = (text: string) => new Uint8Array(Buffer.from(text, 'utf8'));

  it.each([
    ['plain ASCII', 'abc', 3],
    ['a whole two-byte character', 'aé', 3],
    ['a whole four-byte character', 'a😀', 5],
    ['nothing', '', 0],
  ])('keeps %s whole', (_case, text, expected) => {
    expect(completeUtf8Length(bytes(text))).toBe(expected);
  });

  it.each([
    ['a two-byte character cut after its first byte', 'aé', 2, 1],
    ['a three-byte character cut after two', 'a€', 3, 1],
    ['a four-byte character cut after three', 'a😀', 4, 1],
    ['a four-byte character cut after its first byte', 'ab😀', 3, 2],
  ])('stops before %s', (_case, text, cutAt, expected) => {
    expect(completeUtf8Length(bytes(text).subarray(0, cutAt))).toBe(expected);
  });
});
