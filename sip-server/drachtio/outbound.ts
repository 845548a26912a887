/**
 * Outbound-connection mode: for a new request that no connected application routes, the server
 * dials an application started with srf.listen() (drachtio-server's `tcp:host:port` route), waits
 * for it to authenticate, and hands it the request on that connection. Targets are a configured
 * list used round-robin (drachtio-server's HTTP request-handler lookup is not implemented: the
 * list plays the part of its answer). The application ends the session with srf.endSession().
 */
import net from 'node:net';
import type { SipRequest } from '../message';
import { AppConnection } from './app-connection';
import type { Logger } from './context';
import type { DrachtioServer } from './server';

export interface OutboundTarget {
  host: string;
  port: number;
  /** only these methods go to this target (default: all) */
  methods?: string[];
}

/** Parse `host:port[,host:port...]` (the DRACHTIO_OUTBOUND setting). */
export function parseOutboundTargets(s: string | undefined): OutboundTarget[] {
  if (!s) return [];
  return s
    .split(',')
    .map((x) => x.trim())
    .filter(Boolean)
    .map((x) => {
      const m = /^(?:tcp:)?(.+):(\d{1,5})$/.exec(x);
      if (!m) throw new Error(`invalid outbound target "${x}" (expected host:port)`);
      return { host: m[1], port: Number(m[2]) };
    });
}

export class OutboundConnector {
  private next = 0;

  constructor(
    private readonly server: DrachtioServer,
    private readonly targets: OutboundTarget[],
    private readonly log: Logger,
    private readonly timeoutMs = 4000,
  ) {}

  /** Dial a target for this request; undefined when none answers and authenticates in time. */
  async connectFor(req: SipRequest): Promise<AppConnection | undefined> {
    const eligible = this.targets.filter((t) => !t.methods || t.methods.some((m) => m.toUpperCase() === req.method));
    for (let i = 0; i < eligible.length; i++) {
      const t = eligible[(this.next + i) % eligible.length];
      const conn = await this.dial(t);
      if (conn) {
        this.next = (this.next + i + 1) % eligible.length;
        return conn;
      }
    }
    return undefined;
  }

  private dial(t: OutboundTarget): Promise<AppConnection | undefined> {
    return new Promise((resolve) => {
      const socket = net.connect({ host: t.host, port: t.port });
      let settled = false;
      const done = (c: AppConnection | undefined) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        this.server.off('authenticated', onAuth);
        resolve(c);
      };
      const timer = setTimeout(() => {
        this.log.warn({ target: `${t.host}:${t.port}` }, 'outbound application did not authenticate in time');
        socket.destroy();
        done(undefined);
      }, this.timeoutMs);
      let conn: AppConnection | undefined;
      const onAuth = (c: AppConnection) => {
        if (c === conn) done(c);
      };
      socket.once('error', (err) => {
        this.log.warn({ target: `${t.host}:${t.port}`, err: err.message }, 'outbound connection failed');
        done(undefined);
      });
      socket.once('connect', () => {
        conn = new AppConnection(socket, true);
        this.server.on('authenticated', onAuth);
        this.server.adopt(conn);
        conn.once('close', () => done(undefined));
      });
    });
  }
}
