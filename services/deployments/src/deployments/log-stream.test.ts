import {
  identityHeaders,
  openEventStream,
  requestJson,
  waitFor,
  type EventStream,
} from '@platform/shared/testing';
import { startHarness, useHarness } from '../test/harness';
import type { OwnedService } from '../test/projects-stub';

// The pipeline runs shell steps whose output and timing the tests control: a build printing 40
// numbered lines over about a second, after a moment (so a follower can join before the first).
const LINES = 40;
// A line whose leading spaces a client must get as printed (SSE: one space after `data:`).
const INDENTED = '   indented line';
// Status events go through Kafka (relay): every replica's followers hear of each change.
const h = useHarness({
  relay: true,
  pipeline: {
    TEST_BUILD: `sleep 0.4; echo '${INDENTED}'; for i in $(seq 1 ${LINES}); do echo "output line $i"; sleep 0.025; done`,
    TEST_DEPLOY: 'echo deployed',
    LOG_STREAM_HEARTBEAT: '100ms',
  },
});

function follow(service: OwnedService, id: string, headers: Record<string, string> = {}) {
  const url = `${h.api.path(service, `/${id}/logs`)}`;
  const identity = { accountId: service.accountId, audience: 'deployments' } as const;
  return openEventStream(url, { ...identityHeaders(identity, 'GET', url), ...headers });
}

const logLines = (stream: EventStream) => stream.events.filter((e) => e.event === 'log');
const statuses = (stream: EventStream) =>
  stream.events.filter((e) => e.event === 'status').map((e) => JSON.parse(e.data).status);

/** The lines of the build as they must arrive: each once, in order (ids are line numbers). */
function expectWholeLog(stream: EventStream) {
  const lines = logLines(stream);
  const ids = lines.map((e) => Number(e.id));
  expect(ids).toEqual(Array.from({ length: ids.length }, (_, i) => i + 1));
  const output = lines.filter((e) => e.data.startsWith('output line')).map((e) => e.data);
  expect(output).toEqual(Array.from({ length: LINES }, (_, i) => `output line ${i + 1}`));
  expect(lines.at(-1)!.data).toMatch(/==> deploy step finished/);
}

describe('GET …/deployments/:id/logs as Server-Sent Events', () => {
  it('gives followers who join before, during and after the build every line once, in order, then the final status, and ends', async () => {
    const { service, id } = await h.newDeployment();
    const before = await follow(service, id);
    expect(before.status).toBe(200);
    expect(before.headers.get('content-type')).toMatch(/^text\/event-stream/);
    await h.waitForLogs(service, id, 'output line 10');
    const during = await follow(service, id);

    await Promise.all([before.ended, during.ended]);
    const after = await follow(service, id);
    await after.ended;

    for (const stream of [before, during, after]) {
      expectWholeLog(stream);
      expect(statuses(stream).at(-1)).toBe('DEPLOYED');
      // The final status comes after the last line.
      expect(stream.events.at(-1)).toEqual({ event: 'status', data: '{"status":"DEPLOYED"}' });
    }
    expect(statuses(before)).toEqual(['BUILDING', 'DEPLOYING', 'DEPLOYED']);
    expect(statuses(after)).toEqual(['DEPLOYED']);
    // Quiet moments have a comment line (LOG_STREAM_HEARTBEAT, 100 ms here).
    expect(before.comments).toBeGreaterThan(0);
    // Nobody follows any more: the shared tail is gone.
    await waitFor(() => h.followers.size === 0, { what: 'the tail to stop' });
  });

  it('continues after Last-Event-ID, missing nothing and repeating nothing', async () => {
    const { service, id } = await h.newDeployment();
    const first = await follow(service, id);
    await waitFor(() => logLines(first).length >= 8, { what: 'eight lines' });
    first.close();
    await first.ended;
    const seen = logLines(first);
    const last = seen.at(-1)!.id!;

    const again = await follow(service, id, { 'last-event-id': last });
    await again.ended;

    const rest = logLines(again);
    expect(Number(rest[0]!.id)).toBe(Number(last) + 1);
    const joined = { ...first, events: [...seen, ...again.events] } as EventStream;
    expectWholeLog(joined);
  });

  it('answers 204 No Content to a reconnect of a finished deployment that would get nothing new, and the rest to one that would', async () => {
    const { service, id } = await h.newDeployment();
    const first = await follow(service, id);
    await first.ended;
    expect(statuses(first).at(-1)).toBe('DEPLOYED');
    const last = Number(logLines(first).at(-1)!.id);

    // What a browser's EventSource sends when the stream it had ends: the last line's number.
    const reconnect = await follow(service, id, { 'last-event-id': String(last) });
    const beyond = await follow(service, id, { 'last-event-id': String(last + 10) });
    const behind = await follow(service, id, { 'last-event-id': String(last - 3) });
    await behind.ended;

    for (const nothingNew of [reconnect, beyond]) {
      expect(nothingNew.status).toBe(204);
      expect(nothingNew.headers.get('content-type')).toBeNull();
      expect(nothingNew.events).toEqual([]);
    }
    // Three lines it has not had: they, then the final status, then the end, as before.
    expect(behind.status).toBe(200);
    expect(logLines(behind).map((e) => Number(e.id))).toEqual([last - 2, last - 1, last]);
    expect(behind.events.at(-1)).toEqual({ event: 'status', data: '{"status":"DEPLOYED"}' });
    // A first connection (no Last-Event-ID) still gets the whole log and the final status.
    const again = await follow(service, id);
    await again.ended;
    expect(again.status).toBe(200);
    expectWholeLog(again);
    expect(statuses(again)).toEqual(['DEPLOYED']);
  });

  it('sends each line as printed with its number as id, and status events without an id', async () => {
    const { service, id } = await h.newDeployment();

    const stream = await follow(service, id);
    await stream.ended;

    expect(logLines(stream).map((e) => e.data)).toContain(INDENTED);
    const statusEvents = stream.events.filter((e) => e.event === 'status');
    expect(statusEvents.length).toBeGreaterThan(0);
    // An id would become the client's Last-Event-ID, and its reconnect a 400.
    for (const event of statusEvents) expect(event).not.toHaveProperty('id');
  });

  it('answers the whole log so far as text/plain without the SSE Accept header', async () => {
    const { service, id } = await h.newDeployment();
    await h.waitForStatus(service, id, 'DEPLOYED');
    const url = h.api.path(service, `/${id}/logs`);
    const identity = { accountId: service.accountId, audience: 'deployments' } as const;

    const res = await fetch(url, { headers: identityHeaders(identity, 'GET', url) });

    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
    const text = await res.text();
    expect(text).toContain(`output line ${LINES}\n`);
    expect(text).toBe((await h.api.get(service, id)).body.logs);
  });

  it('answers 404 to another account, and 400 to a bad Last-Event-ID', async () => {
    const { service, id } = await h.newDeployment();
    const stranger = h.projects.addService();

    const other = await follow({ ...service, accountId: stranger.accountId }, id);
    const bad = await follow(service, id, { 'last-event-id': 'three' });
    const plain = await requestJson(h.api.path(service, `/${id}/logs`), {
      identity: { accountId: stranger.accountId, audience: 'deployments' },
    });

    expect([other.status, bad.status, plain.status]).toEqual([404, 400, 404]);
    expect(plain.body.error).toBe('NOT_FOUND');
  });

  it('frees what it holds when the client leaves mid-build', async () => {
    const { service, id } = await h.newDeployment();
    const streams = await Promise.all(Array.from({ length: 5 }, () => follow(service, id)));
    await waitFor(() => streams.every((s) => logLines(s).length > 0), { what: 'lines' });
    // Five followers of one deployment share one tail.
    expect(h.followers.size).toBe(1);

    for (const stream of streams) stream.close();

    await waitFor(() => h.followers.size === 0, { what: 'the tail to stop' });
    await h.waitForStatus(service, id, 'DEPLOYED');
  });

  it('frees what it holds for clients that leave while their stream is being set up', async () => {
    const long = await startHarness({ pipeline: { TEST_BUILD: 'echo started; sleep 30' } });
    try {
      const { service, id } = await long.newDeployment();
      await long.waitForLogs(service, id, 'started');
      const url = long.api.path(service, `/${id}/logs`);
      const identity = { accountId: service.accountId, audience: 'deployments' } as const;
      // Each leaves as soon as its headers arrive: while the route awaits its follower, some of
      // the twenty (a race: not every one lands in that window).
      await Promise.all(
        Array.from({ length: 20 }, async () => {
          const controller = new AbortController();
          const res = await fetch(url, {
            headers: { accept: 'text/event-stream', ...identityHeaders(identity, 'GET', url) },
            signal: controller.signal,
          });
          expect(res.status).toBe(200);
          controller.abort();
        }),
      );

      // The build runs 30 s more: a follower left behind would keep its tail polling till then.
      await waitFor(() => long.followers.size === 0, {
        timeoutMs: 10_000,
        what: 'every tail to stop',
      });
    } finally {
      await long.close();
    }
  });

  it('ends the open streams in good order as the service shuts down', async () => {
    const other = await startHarness({ pipeline: { TEST_BUILD: 'echo started; sleep 30' } });
    let closed = false;
    try {
      const { service, id } = await other.newDeployment();
      const url = other.api.path(service, `/${id}/logs`);
      const identity = { accountId: service.accountId, audience: 'deployments' } as const;
      const stream = await openEventStream(url, identityHeaders(identity, 'GET', url));
      await waitFor(() => logLines(stream).some((e) => e.data === 'started'), { what: 'a line' });

      await other.close();
      closed = true;
      await stream.ended;

      expect(stream.endedBy).toBe('server');
    } finally {
      if (!closed) await other.close();
    }
  });
});
