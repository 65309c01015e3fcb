import { waitFor } from '@platform/shared/testing';
import { LogBuffer } from './log-buffer';
import { LogWriter, type LogWriterOptions } from './log-writer';

// The writer's order and batching against a store whose writes the test holds open: what
// reaches the store, when, and never two writes at once. The store's own behaviour is
// log-store.test.ts's; the pipeline's use of it, pipeline.test.ts's and log-push.test.ts's.

/** A store whose writes wait until released, recording each text and how many were open. */
class HeldStore {
  readonly written: string[] = [];
  open = 0;
  mostOpen = 0;
  answer = true;
  private releases: (() => void)[] = [];
  hold = false;

  readonly write = async (text: string): Promise<boolean> => {
    this.open++;
    this.mostOpen = Math.max(this.mostOpen, this.open);
    if (this.hold) await new Promise<void>((resolve) => this.releases.push(resolve));
    this.written.push(text);
    this.open--;
    return this.answer;
  };

  release() {
    this.hold = false;
    for (const release of this.releases.splice(0)) release();
  }
}

function writerOf(store: HeldStore, options: Partial<LogWriterOptions> = {}) {
  const events = { refused: 0, failed: [] as string[] };
  const writer = new LogWriter(new LogBuffer(), {
    write: store.write,
    delayMs: 5,
    maxBatchBytes: 64 * 1024,
    // Long: only a test that fails a write waits for it.
    retryMs: 60_000,
    refused: () => events.refused++,
    failed: (err) => events.failed.push(err.message),
    ...options,
  });
  return { writer, events };
}

describe('LogWriter', () => {
  it('writes a whole line as soon as it is printed, with no heartbeat, and keeps a line still being printed', async () => {
    const store = new HeldStore();
    const { writer } = writerOf(store);

    writer.append('first line\nstill being pr');

    await waitFor(() => store.written.length === 1, { what: 'a write' });
    expect(store.written).toEqual(['first line\n']);
    await writer.close();
  });

  it('never has two writes in flight: what is printed during one goes, in order, in the next', async () => {
    const store = new HeldStore();
    const { writer } = writerOf(store);
    store.hold = true;
    writer.append('one\n');
    await waitFor(() => store.open === 1, { what: 'the first write to start' });

    writer.append('two\n');
    writer.line('three');
    writer.append('four\n');
    // Another turn of the event loop, and beyond the batching delay: still the one write.
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(store.open).toBe(1);
    store.release();

    await waitFor(() => store.written.length === 2, { what: 'the second write' });
    expect(store.written).toEqual(['one\n', 'two\nthree\nfour\n']);
    expect(store.mostOpen).toBe(1);
    await writer.close();
  });

  it('batches the lines printed within its delay into one write', async () => {
    const store = new HeldStore();
    const { writer } = writerOf(store, { delayMs: 200 });

    writer.append('a\n');
    writer.append('b\n');
    writer.append('c\n');

    await waitFor(() => store.written.length === 1, { what: 'a write' });
    expect(store.written).toEqual(['a\nb\nc\n']);
    await writer.close();
  });

  it('writes at once, without its delay, once a batch reaches its size', async () => {
    const store = new HeldStore();
    // A delay no test waits for: only the size can start this write.
    const { writer } = writerOf(store, { delayMs: 600_000, maxBatchBytes: 10 });

    writer.append('short\n');
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(store.written).toEqual([]);
    writer.append('enough now\n');

    await waitFor(() => store.written.length === 1, { what: 'a write' });
    expect(store.written).toEqual(['short\nenough now\n']);
    await writer.close();
  });

  it('flushes everything after the write in flight, the line still being printed ended', async () => {
    const store = new HeldStore();
    const { writer } = writerOf(store);
    store.hold = true;
    writer.append('one\n');
    await waitFor(() => store.open === 1, { what: 'the first write to start' });
    writer.append('two\nunfinished');

    const flushed = writer.flush(true);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(store.open).toBe(1);
    store.release();

    await expect(flushed).resolves.toBe(true);
    expect(store.written).toEqual(['one\n', 'two\nunfinished\n']);
    expect(store.mostOpen).toBe(1);
    await writer.close();
  });

  it('says when the store refused a write (the deployment gone, a later claim)', async () => {
    const store = new HeldStore();
    store.answer = false;
    const { writer, events } = writerOf(store);

    writer.append('late line\n');

    await waitFor(() => events.refused === 1, { what: 'the refusal' });
    await writer.close();
  });

  it('after a failed write, tries the next only after its retry delay', async () => {
    let fail = true;
    let failedAt = 0;
    const written: { text: string; at: number }[] = [];
    const { writer, events } = writerOf(new HeldStore(), {
      retryMs: 300,
      write: async (text) => {
        if (fail) {
          failedAt = Date.now();
          throw new Error('the store is away');
        }
        written.push({ text, at: Date.now() });
        return true;
      },
    });
    writer.append('lost\n');
    await waitFor(() => events.failed.length === 1, { what: 'the failure' });
    fail = false;

    writer.append('next\n');
    await waitFor(() => written.length === 1, { what: 'the next write' });

    expect(written.map((w) => w.text)).toEqual(['next\n']);
    // A timer may fire a millisecond early by the wall clock.
    expect(written[0]!.at - failedAt).toBeGreaterThanOrEqual(295);
    expect(events.failed).toEqual(['the store is away']);
    await writer.close();
  });
});
