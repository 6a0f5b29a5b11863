// Live streams: Server-Sent Events that stay open. The browser's EventSource reconnects by
// itself after a dropped connection, sending Last-Event-ID, and the server goes on from
// there; a stream the server refused (a 429 or a 503: EventSource then gives up) is opened
// again after a pause, resuming from the last id seen with ?last_event_id=.

// follow opens url and calls handlers[name](data, lastEventId) for each event of that name
// (data parsed from JSON). onState gets 'connecting', 'live' or 'reconnecting'. It returns
// {close()}.
export function follow(url, handlers, onState = () => {}) {
  let es = null;
  let lastId = '';
  let closed = false;
  let timer = null;
  let failures = 0;
  const open = () => {
    if (closed) return;
    const u = lastId ? `${url}${url.includes('?') ? '&' : '?'}last_event_id=${encodeURIComponent(lastId)}` : url;
    es = new EventSource(u);
    for (const [name, f] of Object.entries(handlers)) {
      es.addEventListener(name, (ev) => {
        if (ev.lastEventId) lastId = ev.lastEventId;
        let data;
        try {
          data = JSON.parse(ev.data);
        } catch {
          return;
        }
        f(data, ev.lastEventId);
      });
    }
    es.onopen = () => {
      failures = 0;
      onState('live');
    };
    es.onerror = () => {
      if (closed) return;
      onState('reconnecting');
      if (es.readyState !== EventSource.CLOSED) return; // the browser is reconnecting
      es.close();
      failures += 1;
      timer = setTimeout(open, Math.min(30_000, 1000 * 2 ** Math.min(failures, 5)));
    };
  };
  onState('connecting');
  open();
  return {
    close() {
      closed = true;
      clearTimeout(timer);
      es?.close();
    },
  };
}

// STATE_WORDS are what a page says about its stream.
export const STATE_WORDS = {
  connecting: 'Connecting to the live standings…',
  live: 'Live: updates as entrants submit.',
  reconnecting: 'Reconnecting to the live standings… (what you see may be behind)',
};
