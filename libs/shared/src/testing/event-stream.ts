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
 * comes, as a browser's EventSource would parse it (`id`, `event`, `data` fields, blank line
 * ends an event, `:` lines are comments). A non-2xx answer is read whole into no events.
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
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  stream.ended = (async () => {
    let buffer = '';
    let current: Partial<StreamEvent> & { data?: string } = {};
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) {
          stream.endedBy = 'server';
          return;
        }
        buffer += value;
        let newline: number;
        while ((newline = buffer.indexOf('\n')) !== -1) {
          const line = buffer.slice(0, newline);
          buffer = buffer.slice(newline + 1);
          if (line === '') {
            if (current.data !== undefined) {
              const event: StreamEvent = {
                event: current.event ?? 'message',
                data: current.data,
                ...(current.id !== undefined && { id: current.id }),
              };
              stream.events.push(event);
              onEvent?.(event);
            }
            current = {};
          } else if (line.startsWith(':')) {
            stream.comments++;
          } else {
            const colon = line.indexOf(':');
            const field = colon === -1 ? line : line.slice(0, colon);
            const content = colon === -1 ? '' : line.slice(colon + 1).replace(/^ /, '');
            if (field === 'data')
              current.data = current.data === undefined ? content : `${current.data}\n${content}`;
            else if (field === 'event') current.event = content;
            else if (field === 'id') current.id = content;
          }
        }
      }
    } catch {
      // Closed by the client, or the connection broke.
      stream.endedBy = 'cut';
    }
  })();
  return stream;
}
