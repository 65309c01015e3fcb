import { useEffect, useState } from 'react';
import { isFinal, type DeploymentStatus } from '../components/Status';

export interface LogStream {
  /** The log's text so far, line n at index n-1. */
  lines: string[];
  /** The last status the stream reported. */
  status: DeploymentStatus | undefined;
  state: 'connecting' | 'open' | 'reconnecting' | 'ended' | 'failed';
}

/**
 * Follows a deployment's log over Server-Sent Events. After a dropped connection the browser's
 * EventSource reconnects with Last-Event-ID (the last line's number) and the API continues with
 * the next line; a line already held (its id not above the last) is never added twice. The
 * stream is closed at the final status. A reconnect to a deployment that has ended meanwhile
 * with nothing new is answered 204 No Content, which closes the EventSource ('failed'): the page
 * then reads the deployment again.
 */
export function useLogStream(url: string): LogStream {
  const [stream, setStream] = useState<LogStream>({
    lines: [],
    status: undefined,
    state: 'connecting',
  });
  useEffect(() => {
    const source = new EventSource(url);
    let last = 0;
    let pending: string[] = [];
    let frame = 0;
    // Lines arriving together are added in one render.
    const flush = () => {
      frame = 0;
      const added = pending;
      pending = [];
      setStream((s) => ({ ...s, lines: s.lines.concat(added) }));
    };
    source.onopen = () => setStream((s) => ({ ...s, state: 'open' }));
    source.addEventListener('log', (event) => {
      const id = Number((event as MessageEvent).lastEventId);
      if (!Number.isInteger(id) || id <= last) return;
      last = id;
      pending.push((event as MessageEvent<string>).data);
      frame ||= requestAnimationFrame(flush);
    });
    source.addEventListener('status', (event) => {
      const { status } = JSON.parse((event as MessageEvent<string>).data) as {
        status: DeploymentStatus;
      };
      if (frame) {
        cancelAnimationFrame(frame);
        flush();
      }
      const final = isFinal(status);
      if (final) source.close();
      setStream((s) => ({ ...s, status, state: final ? 'ended' : s.state }));
    });
    source.onerror = () => {
      // CONNECTING: the browser tries again by itself (with Last-Event-ID); CLOSED: it gave up.
      const state = source.readyState === EventSource.CLOSED ? 'failed' : 'reconnecting';
      setStream((s) => (s.state === 'ended' ? s : { ...s, state }));
    };
    return () => {
      if (frame) cancelAnimationFrame(frame);
      source.close();
    };
  }, [url]);
  return stream;
}
