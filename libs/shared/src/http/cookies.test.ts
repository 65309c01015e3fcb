import { readCookie } from './cookies';

describe('readCookie', () => {
  it('finds a cookie among others, trimmed and URL-decoded', () => {
    expect(readCookie('a=1; g_csrf_token=abc%3D; b=2', 'g_csrf_token')).toBe('abc=');
  });

  it('takes the first of two cookies with the same name', () => {
    expect(readCookie('g_csrf_token=first; g_csrf_token=second', 'g_csrf_token')).toBe('first');
  });

  it('does not match a cookie whose name only ends with the name', () => {
    expect(readCookie('xg_csrf_token=abc', 'g_csrf_token')).toBeUndefined();
    expect(readCookie(undefined, 'g_csrf_token')).toBeUndefined();
  });

  it('keeps a value that is not valid percent-encoding as it is', () => {
    expect(readCookie('g_csrf_token=%E0%A4%A', 'g_csrf_token')).toBe('%E0%A4%A');
  });
});
