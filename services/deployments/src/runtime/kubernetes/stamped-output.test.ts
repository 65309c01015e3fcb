import { StampedOutput } from './stamped-output';

const T1 = '2026-11-26T10:00:00.000001000Z';
const T2 = '2026-11-26T10:00:00.000002000Z';
const T3 = '2026-11-26T10:00:01.500000000Z';
const micros = (stamp: string) => Date.parse(stamp) * 1000 + Number(stamp.slice(23, 26));

/** The output of `chunks` written one after another, and where a later read would go on. */
function run(chunks: string[], afterMicros = 0) {
  const stamped = new StampedOutput(afterMicros);
  const text = chunks.map((chunk) => stamped.write(chunk)).join('') + stamped.end();
  return { text, lastMicros: stamped.lastMicros };
}

describe('StampedOutput', () => {
  const log = `${T1} first line\n${T2} \n${T2}   indented\n${T3} last\n`;

  it('gives the lines as printed, without their stamps, empty and indented ones included', () => {
    expect(run([log])).toEqual({
      text: 'first line\n\n  indented\nlast\n',
      lastMicros: micros(T3),
    });
  });

  it('gives the same whatever the chunks, a stamp cut anywhere included', () => {
    for (let size = 1; size <= 17; size++) {
      const chunks = log.match(new RegExp(`[\\s\\S]{1,${size}}`, 'g'))!;
      expect(run(chunks).text).toBe('first line\n\n  indented\nlast\n');
    }
  });

  it('leaves out the lines stamped at or before where the last read ended', () => {
    expect(run([log], micros(T2)).text).toBe('last\n');
  });

  it('keeps a line without a stamp with the line before it (the end of a long line)', () => {
    const long = `${T1} aaaa\nbbbb cccc\n${T3} next\n`;
    expect(run([long]).text).toBe('aaaa\nbbbb cccc\nnext\n');
    expect(run([long], micros(T1)).text).toBe('next\n');
  });

  it('passes on a line that is not ended yet, and a last start too short for a stamp', () => {
    expect(run([`${T1} no newline yet`]).text).toBe('no newline yet');
    expect(run([`${T1} one\n`, 'tail']).text).toBe('one\ntail');
  });
});
