import { LogBuffer } from './log-buffer';
import { cutMarker } from './line-limit';

const bytes = (text: string) => Buffer.byteLength(text);

describe('LogBuffer', () => {
  it('hands over whole lines, keeping a line still being printed for the next time', () => {
    const log = new LogBuffer();
    log.append('one\ntw');
    expect(log.dirty).toBe(true);
    expect(log.take()).toBe('one\n');
    expect(log.dirty).toBe(false);
    expect(log.take()).toBe('');
    log.append('o\n');
    expect(log.take()).toBe('two\n');
  });

  it('hands over everything at the end, ending the last line', () => {
    const log = new LogBuffer();
    log.append('done wi');
    expect(log.take(true)).toBe('done wi\n');
    expect(log.take(true)).toBe('');
  });

  it('starts its own lines on a fresh line', () => {
    const log = new LogBuffer();
    log.append('partial');
    log.line('==> build step started');
    log.line('next');
    expect(log.take()).toBe('partial\n==> build step started\nnext\n');
  });

  describe('bounds', () => {
    const limits = { maxLineBytes: 1024, maxPendingBytes: 64 * 1024 };

    it('holds at most the line limit of a line that never ends, and ends it with its length', () => {
      const log = new LogBuffer(limits);

      for (let i = 0; i < 10_000; i++) log.append('a'.repeat(10_000));

      expect(log.pendingBytes).toBeLessThanOrEqual(1024);
      expect(log.dirty).toBe(false);
      const text = log.take(true);
      expect(bytes(text)).toBeLessThanOrEqual(1025);
      expect(text).toMatch(/^a+ \[\.\.\. line cut: it was 100000000 bytes long \.\.\.\]\n$/);
    });

    it('cuts a long line that is followed by others and keeps the others whole', () => {
      const log = new LogBuffer(limits);

      log.append(`start\n${'z'.repeat(5000)}\nend\n`);

      const lines = log.take().split('\n');
      expect(lines[0]).toBe('start');
      expect(lines[1]!.endsWith(cutMarker(5000))).toBe(true);
      expect(lines.slice(2)).toEqual(['end', '']);
    });

    it('ends a line that was cut before a line of its own', () => {
      const log = new LogBuffer(limits);
      log.append('y'.repeat(3000));

      log.line('The build command failed with exit code 1.');

      expect(log.take()).toMatch(
        /^y+ \[\.\.\. line cut: it was 3000 bytes long \.\.\.\]\nThe build command failed with exit code 1\.\n$/,
      );
    });

    it('drops the oldest lines of a flood beyond its limit, saying how many, and keeps the newest', () => {
      const log = new LogBuffer(limits);
      const lines = Array.from({ length: 100_000 }, (_, i) => `line ${i + 1}\n`);
      const all = lines.join('');

      for (let at = 0; at < all.length; at += 65_536) log.append(all.slice(at, at + 65_536));

      expect(log.pendingBytes).toBeLessThanOrEqual(64 * 1024);
      const text = log.take();
      const [marker, ...kept] = text.split('\n').slice(0, -1);
      const dropped = lines.length - kept.length;
      const droppedBytes = bytes(lines.slice(0, dropped).join(''));
      expect(marker).toBe(
        `[... ${dropped} lines (${droppedBytes} bytes) of output dropped here: more came at once than the log keeps ...]`,
      );
      expect(kept.at(-1)).toBe('line 100000');
      expect(kept[0]).toBe(`line ${dropped + 1}`);
      expect(bytes(text)).toBeLessThanOrEqual(64 * 1024 + bytes(marker!) + 1);
      // Counted afresh after each write.
      log.append('after\n');
      expect(log.take()).toBe('after\n');
    });

    it('keeps binary output as text no longer than it was, cut into lines within the limit', () => {
      const log = new LogBuffer(limits);
      const binary = Buffer.alloc(1_000_000);
      for (let i = 0; i < binary.length; i++) binary[i] = (i * 7919 + (i >> 8)) % 256;

      log.append(binary.toString('utf8'));
      const text = log.take(true);

      expect(bytes(text)).toBeLessThanOrEqual(64 * 1024 + 1024 + 200);
      for (const line of text.split('\n')) expect(bytes(line)).toBeLessThanOrEqual(1024);
    });
  });
});
