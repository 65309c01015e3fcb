import { multilineText, plainText } from './validation';

describe('text fields', () => {
  it.each(['\u0000', '\u0007', '\r', '\u001b[31m', '\u007f', '\u0085'])(
    'refuse the control character %j in a one-line and in a free text',
    (control) => {
      expect(plainText(100).safeParse(`a${control}b`).success).toBe(false);
      expect(multilineText(100).safeParse(`a${control}b`).success).toBe(false);
    },
  );

  it('keep newline and tab in a free text only', () => {
    expect(multilineText(100).parse('line one\n\tline two')).toBe('line one\n\tline two');
    expect(plainText(100).safeParse('line one\nline two').success).toBe(false);
    expect(plainText(100).safeParse('a\tb').success).toBe(false);
  });

  it('accept any other character, and refuse past the length limit', () => {
    expect(plainText(20).parse('Café ☕ 名前 👩‍💻')).toBe('Café ☕ 名前 👩‍💻');
    expect(multilineText(3).safeParse('abcd').success).toBe(false);
  });
});
