/**
 * The life of one media stream: connecting (the WebSocket is being set up) → open (it is up, no
 * audio yet) → streaming (audio flows) → closing (one side asked to stop) → closed. Any state may go
 * straight to closed (the socket dropped). Transitions outside this graph are ignored, so late
 * callbacks cannot move a closed stream back to life.
 */
import { EventEmitter } from 'node:events';

export const STREAM_STATES = ['connecting', 'open', 'streaming', 'closing', 'closed'] as const;
export type StreamState = (typeof STREAM_STATES)[number];

const NEXT: Record<StreamState, readonly StreamState[]> = {
  connecting: ['open', 'closing', 'closed'],
  open: ['streaming', 'closing', 'closed'],
  streaming: ['closing', 'closed'],
  closing: ['closed'],
  closed: [],
};

export class StreamStateMachine extends EventEmitter {
  private current: StreamState = 'connecting';

  get state(): StreamState {
    return this.current;
  }

  /** Moves to `to` when the graph allows it; emits 'state' (to, from). Returns whether it moved. */
  to(to: StreamState): boolean {
    if (!NEXT[this.current].includes(to)) return false;
    const from = this.current;
    this.current = to;
    this.emit('state', to, from);
    return true;
  }
}
