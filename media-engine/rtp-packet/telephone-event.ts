/**
 * RFC 4733 telephone-events (DTMF): payload codec, a per-tick sender and a receiver that reports each
 * event once, whether its end packets are repeated, duplicated, reordered or lost.
 */
import { LS } from '../native/leg-layout';

const DIGITS = '0123456789*#ABCD';

export function digitToEvent(d: string): number {
  const i = DIGITS.indexOf(d.toUpperCase());
  if (i < 0) throw new RangeError(`not a DTMF digit: ${d}`);
  return i;
}

export function eventToDigit(e: number): string | undefined {
  return e >= 0 && e < 16 ? DIGITS[e] : undefined;
}

export interface TelephoneEventPayload {
  event: number;
  end: boolean;
  volume: number; // 0..63, -dBm0
  duration: number; // timestamp units
}

export function encodeTelephoneEvent(p: TelephoneEventPayload): Uint8Array {
  const b = new Uint8Array(4);
  b[0] = p.event & 0xff;
  b[1] = (p.end ? 0x80 : 0) | (p.volume & 0x3f);
  b[2] = (p.duration >> 8) & 0xff;
  b[3] = p.duration & 0xff;
  return b;
}

export function decodeTelephoneEvent(b: Uint8Array): TelephoneEventPayload | null {
  if (b.length < 4) return null;
  return { event: b[0], end: (b[1] & 0x80) !== 0, volume: b[1] & 0x3f, duration: (b[2] << 8) | b[3] };
}

export interface EventPacket {
  payload: Uint8Array;
  marker: boolean;
  /** RTP timestamp offset: events carry their start timestamp in every packet */
  startOfEvent: boolean;
}

/**
 * Produces one packet per 20 ms tick while digits are queued. Between digits it yields null for
 * `gapMs` so audio packets fill the pause. The end packet is sent three times (RFC 4733 §2.5.1.4).
 * A duration in ms becomes round(ms · clock / 1000) timestamp units (`clockRate`: 8000, or 48000 on an
 * Opus leg): a digit relayed as samples / 8 keeps its samples exactly.
 * Nothing is allocated per packet: the payload and the packet returned are reused (the caller copies
 * the payload out before the next tick).
 */
export class TelephoneEventSender {
  private queue: { event: number; samples: number }[] = [];
  private current: { event: number; samples: number; sent: number; endsSent: number } | null = null;
  private gapTicks = 0;
  private readonly payload = new Uint8Array(4);
  private readonly packet: EventPacket = { payload: this.payload, marker: false, startOfEvent: false };

  /** the RTP clock of the events (that of the leg's codec, RFC 4733 §2.1) */
  clockRate = 8000;

  constructor(
    private readonly gapMs = 60,
    private readonly volume = 10,
  ) {}

  enqueue(digits: string, durationMs = 100): void {
    const samples = Math.round((Math.max(40, durationMs) * this.clockRate) / 1000);
    for (const d of digits) this.queue.push({ event: digitToEvent(d), samples });
  }

  /** Digits enqueued and not started yet. */
  get queued(): number {
    return this.queue.length;
  }

  get busy(): boolean {
    return this.current !== null || this.queue.length > 0 || this.gapTicks > 0;
  }

  clear(): void {
    this.queue = [];
    this.current = null;
    this.gapTicks = 0;
  }

  /** Called once per tick; null means "send audio this tick". */
  next(samplesPerTick = 160): EventPacket | null {
    if (!this.current) {
      if (this.gapTicks > 0) {
        this.gapTicks--;
        return null;
      }
      const q = this.queue.shift();
      if (!q) return null;
      this.current = { event: q.event, samples: q.samples, sent: 0, endsSent: 0 };
    }
    const c = this.current;
    const first = c.sent === 0;
    c.sent += samplesPerTick;
    const end = c.sent >= c.samples;
    const duration = Math.min(end ? c.samples : c.sent, 0xffff);
    if (end) c.endsSent++;
    const b = this.payload;
    b[0] = c.event & 0xff;
    b[1] = (end ? 0x80 : 0) | (this.volume & 0x3f);
    b[2] = (duration >> 8) & 0xff;
    b[3] = duration & 0xff;
    if (end && c.endsSent >= 3) {
      this.current = null;
      this.gapTicks = Math.round(this.gapMs / 20);
    }
    this.packet.marker = first;
    this.packet.startOfEvent = first;
    return this.packet;
  }
}

export interface DetectedEvent {
  digit: string;
  event: number;
  duration: number; // ms
  /** the event's duration in timestamp units (of the events' clock), as its last packet said */
  samples: number;
  timestamp: number;
}

/**
 * Reports an event when its first end packet arrives; repeated ends and duplicates (same RTP
 * timestamp) are ignored. When an event's end is lost, it is reported when the next event starts
 * or after `flush()` finds it idle for longer than `endTimeoutMs`.
 */
export class TelephoneEventReceiver {
  private active: { ts: number; event: number; duration: number; lastSeen: number } | null = null;
  private reported = new Set<number>(); // recent event timestamps already reported
  private reportedOrder: number[] = [];

  /** the events' RTP clock in ticks per ms (8; 48 on an Opus leg) */
  ticksPerMs = 8;

  constructor(
    private readonly onEvent: (e: DetectedEvent) => void,
    private readonly endTimeoutMs = 300,
  ) {}

  /** True while an event is in progress (in-band detection should stand down). */
  get inEvent(): boolean {
    return this.active !== null;
  }

  onPacket(timestamp: number, payload: Uint8Array, now: number): void {
    const p = decodeTelephoneEvent(payload);
    if (!p) return;
    if (eventToDigit(p.event) === undefined) return; // other events (tones, flash) are not DTMF
    if (this.reported.has(timestamp)) return;
    if (this.active && this.active.ts !== timestamp) this.report(this.active);
    if (!this.active || this.active.ts !== timestamp) {
      this.active = { ts: timestamp, event: p.event, duration: p.duration, lastSeen: now };
    }
    const a = this.active!;
    a.duration = Math.max(a.duration, p.duration);
    a.lastSeen = now;
    if (p.end) this.report(a);
  }

  flush(now: number): void {
    if (this.active && now - this.active.lastSeen > this.endTimeoutMs) this.report(this.active);
  }

  /** Its state into a C leg's state (native/leg-layout.ts): a plain G.711 leg moving to C. */
  saveTo(v: Float64Array): void {
    const a = this.active;
    v[LS.EV_ACTIVE] = a ? 1 : 0;
    v[LS.EV_TS] = a ? a.ts >>> 0 : 0;
    v[LS.EV_EVENT] = a ? a.event : 0;
    v[LS.EV_DURATION] = a ? a.duration : 0;
    v[LS.EV_LAST_SEEN] = a ? a.lastSeen : 0;
    v[LS.EV_REPORTED_N] = this.reportedOrder.length;
    for (let i = 0; i < this.reportedOrder.length; i++) v[LS.EV_REPORTED + i] = this.reportedOrder[i] >>> 0;
  }

  /** Takes the state a C leg hands back (saveTo's layout). */
  loadFrom(v: Float64Array): void {
    this.active = v[LS.EV_ACTIVE] ? { ts: v[LS.EV_TS], event: v[LS.EV_EVENT], duration: v[LS.EV_DURATION], lastSeen: v[LS.EV_LAST_SEEN] } : null;
    this.reportedOrder = [];
    for (let i = 0; i < v[LS.EV_REPORTED_N]; i++) this.reportedOrder.push(v[LS.EV_REPORTED + i]);
    this.reported = new Set(this.reportedOrder);
  }

  /** An event a C leg detected (native/rtp_legs.c, the same rules as onPacket): reported as this receiver reports its own. */
  detected(event: number, samples: number, timestamp: number): void {
    const digit = eventToDigit(event);
    if (digit !== undefined) this.onEvent({ digit, event, duration: Math.round(samples / this.ticksPerMs), samples, timestamp });
  }

  private report(a: { ts: number; event: number; duration: number }): void {
    this.active = null;
    if (this.reported.has(a.ts)) return;
    this.reported.add(a.ts);
    this.reportedOrder.push(a.ts);
    if (this.reportedOrder.length > 32) this.reported.delete(this.reportedOrder.shift()!);
    this.onEvent({ digit: eventToDigit(a.event)!, event: a.event, duration: Math.round(a.duration / this.ticksPerMs), samples: a.duration, timestamp: a.ts });
  }
}
