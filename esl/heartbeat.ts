/**
 * The HEARTBEAT event (FreeSWITCH fires it every 20 s by default; fsmrf reads Max-Sessions,
 * Session-Count, Session-Per-Sec, FreeSWITCH-Hostname, FreeSWITCH-IPv4/IPv6, FreeSWITCH-Version and
 * Idle-CPU from it) and the host's idle CPU it reports.
 */
import os from 'node:os';
import type { ApiContext } from './api';
import { uptimeText, type EventFactory } from './events';
import type { EslEvent } from './wire';

export function heartbeatEvent(events: EventFactory, ctx: ApiContext): EslEvent {
  const s = ctx.sessions;
  const up = ctx.now() - ctx.startedAt;
  const perSec = s.perSecond();
  return events.make('HEARTBEAT', { file: 'esl/heartbeat.ts', func: 'heartbeatEvent' }, [
    ['Event-Info', 'System Ready'],
    ['Up-Time', uptimeText(up)],
    ['FreeSWITCH-Version', ctx.id.version],
    ['Uptime-msec', `${Math.floor(up)}`],
    ['Session-Count', `${s.count}`],
    ['Max-Sessions', `${s.max}`],
    ['Session-Per-Sec', `${perSec}`],
    ['Session-Per-Sec-Last', `${perSec}`],
    ['Session-Per-Sec-Max', `${s.peakPerSecond}`],
    ['Session-Per-Sec-FiveMin', `${s.peakPerSecond}`],
    ['Session-Since-Startup', `${s.sinceStartup}`],
    ['Session-Peak-Max', `${s.peak}`],
    ['Session-Peak-FiveMin', `${s.peak}`],
    ['Idle-CPU', ctx.idleCpu().toFixed(6)],
  ]);
}

/** The host's idle CPU in percent since the previous reading (the first: since boot), from os.cpus(). */
export class IdleCpu {
  private last = totals();

  read(): number {
    const now = totals();
    const total = now.total - this.last.total;
    const idle = now.idle - this.last.idle;
    this.last = now;
    return total > 0 ? (100 * idle) / total : 100;
  }
}

function totals(): { idle: number; total: number } {
  let idle = 0;
  let total = 0;
  for (const c of os.cpus()) {
    idle += c.times.idle;
    total += c.times.user + c.times.nice + c.times.sys + c.times.idle + c.times.irq;
  }
  return { idle, total };
}
