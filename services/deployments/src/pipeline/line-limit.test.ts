import { LineLimit, cutMarker } from './line-limit';

const bytes = (text: string) => Buffer.byteLength(text);
/** Every line of `text` (its last, unended one included). */
const linesOf = (text: string) => text.split('\n');

describe('LineLimit', () => {
  it('passes short lines through as they are, a line still being printed included', () => {
    const limit = new LineLimit(1024);

    expect(limit.write('one\ntwo\nthr')).toBe('one\ntwo\nthr');
    expect(limit.write('ee\n')).toBe('ee\n');
    expect(limit.end()).toBe('');
  });

  it('cuts a line longer than the limit, ending it with a marker saying how long it was', () => {
    const limit = new LineLimit(1024);

    const out = limit.write(`${'a'.repeat(5000)}\nnext\n`);

    const [cut, next] = linesOf(out);
    expect(cut).toMatch(/^a+ \[\.\.\. line cut: it was 5000 bytes long \.\.\.\]$/);
    expect(bytes(cut!)).toBeLessThanOrEqual(1024);
    expect(cut!.endsWith(cutMarker(5000))).toBe(true);
    expect(next).toBe('next');
  });

  it('passes a line of up to the limit unchanged, however it was printed', () => {
    const limit = new LineLimit(1024);
    const line = 'd'.repeat(1024);

    const out = limit.write(line.slice(0, 1000)) + limit.write(line.slice(1000)) + limit.end();

    expect(out).toBe(line);
  });

  it('cuts a line printed in many pieces, counting every byte of it', () => {
    const limit = new LineLimit(1024);
    let out = '';

    for (let i = 0; i < 1000; i++) out += limit.write('x'.repeat(100));
    out += limit.write('\n');

    expect(bytes(out)).toBeLessThanOrEqual(1025);
    expect(out.endsWith(`${cutMarker(100_000)}\n`)).toBe(true);
  });

  it('ends a line that was cut when the output ends without its newline', () => {
    const limit = new LineLimit(1024);
    const head = limit.write('b'.repeat(3000));

    const marker = limit.end();

    expect(marker).toBe(cutMarker(3000));
    expect(bytes(head + marker)).toBeLessThanOrEqual(1024);
    // The next line starts afresh.
    expect(limit.write('short\n')).toBe('short\n');
  });

  it('never splits a character, and counts bytes, not characters', () => {
    const limit = new LineLimit(1024);

    const out = limit.write(`${'é'.repeat(1000)}\n`);

    const [cut] = linesOf(out);
    expect(cut).not.toContain('\uFFFD');
    expect(bytes(cut!)).toBeLessThanOrEqual(1024);
    expect(cut!.endsWith(cutMarker(2000))).toBe(true);
  });

  it('leaves a line that was cut no longer than the limit, so cutting it again changes nothing', () => {
    const first = new LineLimit(1024);
    const once = first.write(`${'c'.repeat(1_000_000)}\n`);

    expect(new LineLimit(1024).write(once)).toBe(once);
  });

  it('refuses a limit too small to hold the marker', () => {
    expect(() => new LineLimit(64)).toThrow(/too small/);
  });
});
