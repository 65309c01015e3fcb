import { mergeByTime, parsePodLog, parseTimestamp, sinceTimeOf } from './pod-log';

/** A line as the kubelet gives it with timestamps: the time, a space, the line. */
const stamped = (time: string, text: string) => `${time} ${text}\n`;
const T = (fraction: string) => `2025-03-04T05:06:07.${fraction}Z`;
const SECOND_MICROS = Date.parse('2025-03-04T05:06:07Z') * 1000;

describe('a release’s lines from its pods’ logs', () => {
  it('reads the kubelet’s timestamps to the nanosecond, in any zone', () => {
    const second = BigInt(Date.parse('2025-03-04T05:06:07Z')) * 1_000_000n;
    expect(parseTimestamp(T('123456789'))).toBe(second + 123_456_789n);
    expect(parseTimestamp('2025-03-04T07:06:07.000000001+02:00')).toBe(second + 1n);
    expect(parseTimestamp('2025-03-04T05:06:07.5Z')).toBe(second + 500_000_000n);
    expect(parseTimestamp('2025-03-04T05:06:07Z')).toBe(second);
    expect(parseTimestamp('hello')).toBeNull();
    expect(parseTimestamp('2025-03-04 05:06:07Z')).toBeNull();
  });

  it('strips the timestamps and keeps what follows them as printed', () => {
    const text = stamped(T('000000001'), 'first') + stamped(T('000000002'), '  two  spaces ');
    expect(parsePodLog(text, 0).map((line) => line.text)).toEqual(['first', '  two  spaces ']);
    expect(parsePodLog(stamped(T('000000003'), ''), 0)[0]?.text).toBe('');
  });

  it('returns only the lines after the offset, to the microsecond', () => {
    const text =
      stamped(T('000001000'), 'at 1 µs') +
      stamped(T('000001999'), 'still 1 µs') +
      stamped(T('000002000'), 'at 2 µs');
    expect(parsePodLog(text, SECOND_MICROS + 1).map((line) => line.text)).toEqual(['at 2 µs']);
    expect(parsePodLog(text, SECOND_MICROS).map((line) => line.text)).toHaveLength(3);
  });

  it('leaves a line not yet ended for a later read', () => {
    const text = stamped(T('000001000'), 'done') + `${T('000002000')} half a li`;
    expect(parsePodLog(text, 0).map((line) => line.text)).toEqual(['done']);
    expect(parsePodLog('', 0)).toEqual([]);
  });

  it('gives a piece without a timestamp the time of the line before it, or drops it', () => {
    const text = 'end of a line begun earlier\n' + stamped(T('000001000'), 'next');
    expect(parsePodLog(text, SECOND_MICROS - 1).map((line) => line.text)).toEqual(['next']);
    const after = stamped(T('000001000'), 'one') + 'no stamp\n';
    expect(parsePodLog(after, 0)).toEqual([
      { at: parseTimestamp(T('000001000')), text: 'one' },
      { at: parseTimestamp(T('000001000')), text: 'no stamp' },
    ]);
  });

  it('merges several pods by time, each pod’s own order kept, and goes on from the last', () => {
    const a = parsePodLog(
      stamped(T('000001000'), 'a1') + stamped(T('000003000'), 'a2') + stamped(T('000003000'), 'a3'),
      0,
    );
    const b = parsePodLog(stamped(T('000002000'), 'b1') + stamped(T('000003000'), 'b2'), 0);
    const merged = mergeByTime([a, b], 0);
    expect(merged.text).toBe('a1\nb1\na2\na3\nb2\n');
    expect(merged.nextOffset).toBe(SECOND_MICROS + 3);
    expect(mergeByTime([[], []], 42)).toEqual({ text: '', nextOffset: 42 });
  });

  it('reads on from the offset it gave without a line twice', () => {
    const early = stamped(T('000001000'), 'one') + stamped(T('000002000'), 'two');
    const first = mergeByTime([parsePodLog(early, 0)], 0);
    const later = early + stamped(T('000003000'), 'three');
    const second = mergeByTime([parsePodLog(later, first.nextOffset)], first.nextOffset);
    expect(first.text + second.text).toBe('one\ntwo\nthree\n');
    expect(mergeByTime([parsePodLog(later, second.nextOffset)], second.nextOffset)).toEqual({
      text: '',
      nextOffset: second.nextOffset,
    });
  });

  it('asks the API for whole seconds from the offset’s, or for everything', () => {
    expect(sinceTimeOf(0)).toBeUndefined();
    expect(sinceTimeOf(SECOND_MICROS + 999_999)).toBe('2025-03-04T05:06:07Z');
    expect(sinceTimeOf(SECOND_MICROS)).toBe('2025-03-04T05:06:07Z');
  });
});
