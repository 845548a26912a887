/**
 * The connection registry and fan-out. Connections are indexed by customer, so an event only
 * visits that customer's sockets; each socket gets an event at most once however many of its
 * topics match. A socket whose unsent bytes exceed the bound is terminated: the send is
 * non-blocking, so one slow reader never delays the others.
 */
import type { WebSocket } from 'ws';
import type { AuthContext } from '../context';
import type { PlatformEvent } from '../../core/events/bus';
import { topicOf } from '../../core/events/catalogue';
import { matches, type Topic } from './topics';

export interface Connection {
  socket: WebSocket;
  auth: AuthContext;
  topics: Map<string, Topic>;
  alive: boolean;
}

export interface HubStats {
  connections: number;
  delivered: number;
  dropped: number;
}

export class Hub {
  private readonly byCustomer = new Map<string, Set<Connection>>();
  readonly stats: HubStats = { connections: 0, delivered: 0, dropped: 0 };

  constructor(private readonly maxBufferedBytes: number) {}

  add(c: Connection): void {
    const key = c.auth.customerId.toLowerCase();
    let set = this.byCustomer.get(key);
    if (!set) this.byCustomer.set(key, (set = new Set()));
    set.add(c);
    this.stats.connections++;
  }

  remove(c: Connection): void {
    const key = c.auth.customerId.toLowerCase();
    const set = this.byCustomer.get(key);
    if (set?.delete(c)) {
      this.stats.connections--;
      if (set.size === 0) this.byCustomer.delete(key);
    }
  }

  /** Whether any socket of the customer is connected here. */
  hasCustomer(customerId: string): boolean {
    return this.byCustomer.has(customerId.toLowerCase());
  }

  all(): Connection[] {
    return [...this.byCustomer.values()].flatMap((s) => [...s]);
  }

  dispatch(e: PlatformEvent): void {
    const set = this.byCustomer.get(e.customer_id.toLowerCase());
    if (!set) return;
    let frame: string | null = null;
    for (const c of set) {
      let hit = false;
      for (const t of c.topics.values()) {
        if (matches(t, e)) {
          hit = true;
          break;
        }
      }
      if (!hit) continue;
      if (c.socket.bufferedAmount > this.maxBufferedBytes) {
        this.stats.dropped++;
        set.delete(c);
        this.stats.connections--;
        c.socket.terminate();
        continue;
      }
      frame ??= JSON.stringify({ event_type: e.event_type, timestamp: e.timestamp, topic: topicOf(e), data: e.data });
      c.socket.send(frame);
      this.stats.delivered++;
    }
  }
}
