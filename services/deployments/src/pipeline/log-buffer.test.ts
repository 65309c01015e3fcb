import { LogBuffer, TRIMMED_MARKER } from './log-buffer';

const bytes = (text: string) => Buffer.byteLength(text, 'utf8');

describe('LogBuffer', () => {
  it('keeps output as it comes while under the limit', () => {
    const log = new LogBuffer(1024, 'earlier\n');
    log.append('one ');
    log.append('two\n');
    expect(log.toString()).toBe('earlier\none two\n');
    expect(log.dirty).toBe(true);
  });

  it('starts its own lines on a fresh line', () => {
    const log = new LogBuffer(1024);
    log.append('partial');
    log.line('==> build step started');
    log.line('next');
    expect(log.toString()).toBe('partial\n==> build step started\nnext\n');
  });

  it('drops the oldest output beyond the limit and marks it once at the top', () => {
    const limit = 400;
    const log = new LogBuffer(limit);
    for (let i = 0; i < 100; i++) log.append(`line ${String(i).padStart(3, '0')}\n`);
    const text = log.toString();
    expect(bytes(text)).toBeLessThanOrEqual(limit);
    expect(text.startsWith(TRIMMED_MARKER)).toBe(true);
    expect(text.split(TRIMMED_MARKER)).toHaveLength(2);
    expect(text.endsWith('line 099\n')).toBe(true);
    expect(text).not.toContain('line 000');
    // Cut at a line boundary: every kept line is whole.
    const kept = text.slice(TRIMMED_MARKER.length).split('\n').filter(Boolean);
    expect(kept.every((l) => /^line \d{3}$/.test(l))).toBe(true);
  });

  it('never splits a multi-byte character when trimming', () => {
    const limit = 200;
    const log = new LogBuffer(limit);
    log.append('é'.repeat(500));
    const text = log.toString();
    expect(bytes(text)).toBeLessThanOrEqual(limit);
    expect(text.slice(TRIMMED_MARKER.length)).toMatch(/^é+$/);
  });

  it('continues a trimmed log loaded from the database without adding a second marker', () => {
    const first = new LogBuffer(300);
    first.append('x'.repeat(1000));
    const resumed = new LogBuffer(300, first.toString());
    resumed.line('attempt 2');
    const text = resumed.toString();
    expect(text.split(TRIMMED_MARKER)).toHaveLength(2);
    expect(text.endsWith('x\nattempt 2\n')).toBe(true);
    expect(bytes(text)).toBeLessThanOrEqual(300);
  });

  it('stays dirty for output that arrived while a snapshot was being written', () => {
    const log = new LogBuffer(1024);
    log.append('a');
    const first = log.snapshot();
    log.append('b');
    log.written(first);
    expect(first.text).toBe('a');
    expect(log.dirty).toBe(true);
    log.written(log.snapshot());
    expect(log.dirty).toBe(false);
    log.append('');
    expect(log.dirty).toBe(false);
  });
});
