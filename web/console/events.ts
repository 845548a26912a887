/**
 * The /v1.0/ws event stream (the login cookie authenticates the upgrade). One socket per page;
 * components subscribe to topics and get `{event_type, timestamp, topic, data}` frames. A socket that
 * drops is reopened after a backoff (RETRY_MIN_MS doubling up to RETRY_MAX_MS, back to the least once
 * open), subscribes again to every topic still wanted and tells `onReopen` listeners, which read again
 * what they show: events published while it was down are not replayed.
 */

export const RETRY_MIN_MS = 500;
export const RETRY_MAX_MS = 15_000;

export interface PlatformEvent {
  event_type: string;
  timestamp: string;
  topic: string;
  data: Record<string, unknown>;
}

type Listener = (e: PlatformEvent) => void;
export type SocketState = 'connecting' | 'open' | 'closed';

export class EventStream {
  private socket: WebSocket | null = null;
  private readonly topics = new Map<string, Set<Listener>>();
  private readonly reopenListeners = new Set<() => void>();
  private retryMs = RETRY_MIN_MS;
  private timer: number | undefined;
  private stopped = false;
  state: SocketState = 'closed';
  onState: ((s: SocketState, reason: string) => void) | null = null;

  constructor(private readonly url = `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/v1.0/ws`) {}

  start(): void {
    this.stopped = false;
    this.connect();
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
    this.socket?.close(1000);
    this.socket = null;
  }

  /** Listen to a topic (`customer_id:<id>:call:*` …); returns the unsubscribe function. */
  subscribe(topic: string, fn: Listener): () => void {
    let set = this.topics.get(topic);
    if (!set) {
      set = new Set();
      this.topics.set(topic, set);
      this.sendTopics('subscribe', [topic]);
    }
    set.add(fn);
    return () => {
      const s = this.topics.get(topic);
      if (!s) return;
      s.delete(fn);
      if (s.size === 0) {
        this.topics.delete(topic);
        this.sendTopics('unsubscribe', [topic]);
      }
    };
  }

  /**
   * `fn` runs each time the socket opens after this call (a reconnect, or the first open when the socket
   * was not yet open), once its topics are subscribed again; returns the remove function.
   */
  onReopen(fn: () => void): () => void {
    this.reopenListeners.add(fn);
    return () => this.reopenListeners.delete(fn);
  }

  private setState(s: SocketState, reason = ''): void {
    this.state = s;
    this.onState?.(s, reason);
  }

  private sendTopics(type: 'subscribe' | 'unsubscribe', topics: string[]): void {
    if (this.socket?.readyState === WebSocket.OPEN && topics.length) this.socket.send(JSON.stringify({ type, topics }));
  }

  private connect(): void {
    this.setState('connecting');
    const ws = new WebSocket(this.url);
    this.socket = ws;
    ws.onopen = () => {
      this.retryMs = RETRY_MIN_MS;
      this.setState('open');
      this.sendTopics('subscribe', [...this.topics.keys()]);
      for (const fn of [...this.reopenListeners]) fn();
    };
    ws.onmessage = (m) => {
      let e: PlatformEvent;
      try {
        e = JSON.parse(String(m.data)) as PlatformEvent;
      } catch {
        return;
      }
      if (typeof e.event_type !== 'string') return;
      for (const [topic, set] of this.topics) if (matches(topic, e.topic)) for (const fn of set) fn(e);
    };
    ws.onclose = (c) => {
      if (this.socket !== ws) return;
      this.socket = null;
      this.setState('closed', c.reason);
      if (this.stopped) return;
      this.timer = window.setTimeout(() => this.connect(), this.retryMs);
      this.retryMs = Math.min(this.retryMs * 2, RETRY_MAX_MS);
    };
  }
}

/**
 * Does an event's four-part topic fall under a subscribed topic (two, three or four parts, `*`)?
 * Frames always carry the customer topic; an `agent_id:<me>:...` subscription (agents below manager)
 * is already filtered to the agent by the server, so only its resource and id are compared.
 */
export function matches(subscribed: string, eventTopic: string): boolean {
  const s = subscribed.split(':');
  const e = eventTopic.split(':');
  if (s[0] === 'agent_id' && e[0] === 'customer_id') {
    s[0] = e[0];
    s[1] = e[1]!;
  }
  for (let i = 0; i < s.length; i++) {
    if (s[i] === '*' && i === 3) continue;
    if (s[i] !== e[i]) return false;
  }
  return true;
}
