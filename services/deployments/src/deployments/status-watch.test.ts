import { StatusWatch } from './status-watch';

describe('StatusWatch', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('wakes every waiter of the deployment that changed, and only those', async () => {
    const watch = new StatusWatch();
    const a1 = watch.nextChange('a', 10_000);
    const a2 = watch.nextChange('a', 10_000);
    const b = watch.nextChange('b', 10_000);

    watch.changed('a');

    await expect(Promise.all([a1.outcome, a2.outcome])).resolves.toEqual(['changed', 'changed']);
    expect(watch.size).toBe(1);
    b.cancel();
    await expect(b.outcome).resolves.toBe('aborted');
    expect(watch.size).toBe(0);
  });

  it('gives up after its time limit and forgets the waiter', async () => {
    const watch = new StatusWatch();
    const pending = watch.nextChange('a', 5_000);
    await jest.advanceTimersByTimeAsync(4_999);
    expect(watch.size).toBe(1);
    await jest.advanceTimersByTimeAsync(1);
    await expect(pending.outcome).resolves.toBe('timeout');
    expect(watch.size).toBe(0);
    watch.changed('a'); // nothing left to wake
  });

  it('stops waiting when the request goes away', async () => {
    const watch = new StatusWatch();
    const leaving = new AbortController();
    const pending = watch.nextChange('a', 60_000, leaving.signal);
    leaving.abort();
    await expect(pending.outcome).resolves.toBe('aborted');
    expect(watch.size).toBe(0);
    const gone = watch.nextChange('a', 60_000, leaving.signal);
    await expect(gone.outcome).resolves.toBe('aborted');
    expect(watch.size).toBe(0);
  });
});
