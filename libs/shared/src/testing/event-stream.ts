import { createParser } from 'eventsource-parser';

/** One Server-Sent Event as a client reads it. */
export interface StreamEvent {
  id?: string;
  event: string;
  data: string;
}

export interface EventStream {
  status: number;
  headers: Headers;
  /** Every event so far, in order. */
  events: StreamEvent[];
  /** Comment lines so far (`: keep-alive`). */
  comments: number;
  /** Settles when the server ends the stream (or the client closed it). */
  ended: Promise<void>;
  /** Once ended: `server` when the server ended it in good order, `cut` when the connection broke or the client closed it. */
  endedBy?: 'server' | 'cut';
  /** Closes the connection from the client's side. */
  close(): void;
}

/**
 * Opens `url` as a Server-Sent Events stream (`Accept: text/event-stream`) and reads it as it
 * comes, parsed as a browser's EventSource parses it (eventsource-parser: `id`, `event`, `data`
 * fields, a blank line ends an event, `:` lines are comments). A non-2xx answer is read whole
 * into no events.
 */
export async function openEventStream(
  url: string,
  headers: Record<string, string> = {},
  /** Called with each event as it is read (a benchmark stamps its arrival). */
  onEvent?: (event: StreamEvent) => void,
): Promise<EventStream> {
  const abort = new AbortController();
  const response = await fetch(url, {
    headers: { accept: 'text/event-stream', ...headers },
    signal: abort.signal,
  });
  const stream: EventStream = {
    status: response.status,
    headers: response.headers,
    events: [],
    comments: 0,
    ended: Promise.resolve(),
    close: () => abort.abort(),
  };
  if (!response.ok || !response.body) {
    await response.text().catch(() => '');
    return stream;
  }
  const parser = createParser({
    onEvent: ({ id, event = 'message', data }) => {
      const read: StreamEvent = { event, data, ...(id !== undefined && { id }) };
      stream.events.push(read);
      onEvent?.(read);
    },
    onComment: () => stream.comments++,
  });
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  stream.ended = (async () => {
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) {
          stream.endedBy = 'server';
          return;
        }
        parser.feed(value);
      }
    } catch {
      // Closed by the client, or the connection broke.
      stream.endedBy = 'cut';
    }
  })();
  return stream;
}
