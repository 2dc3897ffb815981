/** One Server-Sent Event. */
export interface ServerSentEvent {
  id?: string;
  event: string;
  data: string;
}

/**
 * Reads Server-Sent Events from a byte stream (the `text/event-stream` format), calling
 * `onEvent` for each complete event. Linear in the stream's length: it scans each line once.
 * Used instead of `EventSource` so that a Bearer token can be sent (and so it runs in Node).
 */
export async function readServerSentEvents(
  body: ReadableStream<Uint8Array>,
  onEvent: (event: ServerSentEvent) => void,
): Promise<void> {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  let pending = '';
  let current: ServerSentEvent = { event: 'message', data: '' };
  let hasData = false;
  const line = (text: string) => {
    if (text === '') {
      if (hasData) onEvent(current);
      current = { event: 'message', data: '' };
      hasData = false;
      return;
    }
    if (text.startsWith(':')) return;
    const colon = text.indexOf(':');
    const field = colon === -1 ? text : text.slice(0, colon);
    let value = colon === -1 ? '' : text.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'data') {
      current.data = hasData ? `${current.data}\n${value}` : value;
      hasData = true;
    } else if (field === 'event') current.event = value;
    else if (field === 'id') current.id = value;
  };
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    pending += value;
    let start = 0;
    let end = pending.indexOf('\n', start);
    while (end !== -1) {
      line(pending.slice(start, end).replace(/\r$/, ''));
      start = end + 1;
      end = pending.indexOf('\n', start);
    }
    pending = pending.slice(start);
  }
}
