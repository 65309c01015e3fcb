import { testLogger, waitFor } from '@platform/shared/testing';
import { LogFollowers, type FollowerSink } from './log-followers';
import type { LogLine } from './log-store';
import type { DeploymentStatus } from './status';

// The tail's order with the store and the status events, raced by holding a read of the store
// open while the pipeline writes on and announces: an in-memory log, since the store's own
// behaviour is log-store.test.ts's.
const ID = 'd1';

class MemoryLog {
  lines: LogLine[] = [];
  status: DeploymentStatus = 'BUILDING';
  /** When set, the next `linesAfter` answers what the log held when it was called, then waits. */
  private hold?: { entered: () => void; release: Promise<void> };

  write(...texts: string[]) {
    for (const text of texts) this.lines.push({ n: this.lines.length + 1, text });
  }

  holdNextRead(): { entered: Promise<void>; release: () => void } {
    let entered!: () => void;
    let release!: () => void;
    const enteredPromise = new Promise<void>((resolve) => (entered = resolve));
    this.hold = { entered, release: new Promise<void>((resolve) => (release = resolve)) };
    return { entered: enteredPromise, release };
  }

  async linesAfter(_id: string, after: number): Promise<LogLine[]> {
    const snapshot = this.lines.filter((line) => line.n > after);
    const hold = this.hold;
    if (hold) {
      this.hold = undefined;
      hold.entered();
      await hold.release;
    }
    return snapshot;
  }

  async lastLine(): Promise<number> {
    return this.lines.length;
  }
}

function recorder() {
  const got: string[] = [];
  let ended!: () => void;
  const end = new Promise<void>((resolve) => (ended = resolve));
  const sink: FollowerSink = {
    line: (line) => got.push(`${line.n} ${line.text}`),
    status: (status) => got.push(status),
    end: () => {
      got.push('end');
      ended();
    },
  };
  return { got, sink, end };
}

describe('LogFollowers', () => {
  const stopping = new AbortController();
  afterAll(() => stopping.abort());

  function followersOf(log: MemoryLog, pollMs = 60_000) {
    return new LogFollowers({
      logs: log,
      statusOf: async () => log.status,
      // Long: in these tests only status events and notices make the tail read, unless told.
      pollMs,
      logger: testLogger(),
      stopping: stopping.signal,
    });
  }

  it('sends the lines written before a final status that was announced while it was reading, then the status', async () => {
    const log = new MemoryLog();
    log.write('==> build step finished');
    const followers = followersOf(log);
    const { got, sink, end } = recorder();
    await followers.follow(ID, 0, sink);

    // A status event makes the tail read; the read sees the log as it is now...
    const read = log.holdNextRead();
    log.status = 'DEPLOYING';
    followers.statusChanged(ID, 'DEPLOYING');
    await read.entered;
    // ...while the pipeline writes its last lines, then DEPLOYED, and the event arrives.
    log.write('deployed', '==> deploy step finished');
    log.status = 'DEPLOYED';
    followers.statusChanged(ID, 'DEPLOYED');
    read.release();
    await end;

    expect(got).toEqual([
      '1 ==> build step finished',
      'BUILDING',
      'DEPLOYING',
      '2 deployed',
      '3 ==> deploy step finished',
      'DEPLOYED',
      'end',
    ]);
    expect(followers.size).toBe(0);
  });

  it('gives a follower joining a finished deployment the whole log, the status and the end', async () => {
    const log = new MemoryLog();
    log.write('one', 'two');
    log.status = 'FAILED';
    const followers = followersOf(log);
    const { got, sink, end } = recorder();

    await followers.follow(ID, 1, sink);
    await end;

    expect(got).toEqual(['2 two', 'FAILED', 'end']);
    expect(followers.size).toBe(0);
  });

  it('reads the lines after its last as soon as a notice says the log grew, its poll an hour away', async () => {
    const log = new MemoryLog();
    log.write('one');
    const followers = followersOf(log, 3_600_000);
    const { got, sink } = recorder();
    await followers.follow(ID, 0, sink);

    log.write('two', 'three');
    followers.appended(ID, 3);

    await waitFor(() => got.length === 4, { what: 'the new lines' });
    expect(got).toEqual(['1 one', 'BUILDING', '2 two', '3 three']);
    followers.closeAll();
  });

  it('reads once more after a read during which a notice came, for the lines that read missed', async () => {
    const log = new MemoryLog();
    const followers = followersOf(log, 3_600_000);
    const { got, sink } = recorder();
    await followers.follow(ID, 0, sink);
    const read = log.holdNextRead();
    log.write('one');
    followers.appended(ID, 1);
    await read.entered;

    // Written and told of while the read that will not see it is open.
    log.write('two');
    followers.appended(ID, 2);
    read.release();

    await waitFor(() => got.length === 3, { what: 'both lines' });
    expect(got).toEqual(['BUILDING', '1 one', '2 two']);
    followers.closeAll();
  });

  it('ignores a notice of lines it has, and finds lines no notice told of at its fallback poll', async () => {
    const log = new MemoryLog();
    log.write('one');
    const followers = followersOf(log, 200);
    const { got, sink } = recorder();
    await followers.follow(ID, 0, sink);
    followers.appended(ID, 1);

    // A notice lost: only the poll reads it.
    log.write('two');

    await waitFor(() => got.length === 3, { what: 'the line at the poll' });
    expect(got).toEqual(['1 one', 'BUILDING', '2 two']);
    followers.closeAll();
  });

  it('sends the lines a notice of this replica carries, right after its last, without reading the store', async () => {
    const log = new MemoryLog();
    const followers = followersOf(log, 3_600_000);
    const { got, sink } = recorder();
    await followers.follow(ID, 0, sink);

    // Not in the in-memory log: only the notice has them.
    followers.appended(ID, 2, { firstLine: 1, text: 'one\ntwo\n' });
    await new Promise(setImmediate);

    expect(got).toEqual(['BUILDING', '1 one', '2 two']);
    followers.closeAll();
  });

  it('hands a sink that can send items together each delivery as one batch, the notices of one turn of the event loop as one', async () => {
    const log = new MemoryLog();
    log.write('one');
    const followers = followersOf(log, 3_600_000);
    const batches: string[][] = [];
    let open: string[] | undefined;
    const push = (item: string) => (open ? open.push(item) : batches.push([item]));
    await followers.follow(ID, 0, {
      line: (line) => push(String(line.n)),
      status: (status) => push(status),
      end: () => push('end'),
      together: (send) => {
        open = [];
        send();
        batches.push(open);
        open = undefined;
      },
    });

    // Two notices in one turn of the event loop (one Kafka batch, say): one delivery.
    followers.appended(ID, 3, { firstLine: 2, text: 'two\nthree\n' });
    followers.appended(ID, 4, { firstLine: 4, text: 'four\n' });
    await new Promise(setImmediate);

    expect(batches).toEqual([
      ['1', 'BUILDING'],
      ['2', '3', '4'],
    ]);
    followers.closeAll();
  });
});
