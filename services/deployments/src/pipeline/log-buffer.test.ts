import { LogBuffer } from './log-buffer';

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
});
