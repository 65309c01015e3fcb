import { assertCsrfTokenMatches } from './csrf';

describe('assertCsrfTokenMatches', () => {
  it('accepts a token equal to the cookie', () => {
    expect(() => assertCsrfTokenMatches('g_csrf_token=abc', 'abc')).not.toThrow();
  });

  it.each([
    ['a different token', 'g_csrf_token=abc', 'abd'],
    ['a longer token', 'g_csrf_token=abc', 'abcd'],
    ['no cookie at all', undefined, 'abc'],
    ['an empty cookie', 'g_csrf_token=', 'abc'],
  ])('refuses %s with 403 CSRF_FAILED', (_case, header, token) => {
    expect(() => assertCsrfTokenMatches(header, token)).toThrow(
      expect.objectContaining({ code: 'CSRF_FAILED', status: 403 }),
    );
  });
});
