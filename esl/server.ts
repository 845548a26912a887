/**
 * The inbound event socket (FreeSWITCH's mod_event_socket on TCP 8021): accepts connections, refuses
 * an address that failed `auth` too often, fires HEARTBEAT every `heartbeatMs`, and sends each event
 * to the connections that subscribed to it. Off unless started (esl/main.ts, ESL_LISTEN).
 */
import { createHash, randomUUID } from 'node:crypto';
import { EventEmitter } from 'node:events';
import net from 'node:net';
import os from 'node:os';
import { egressPolicyFor, type EgressPolicy } from '../core/net';
import { guardServer } from '../core/net/socket-guard';
import type { ApiContext, SipProfile } from './api';
import { AuthRefusals } from './auth-limit';
import { Bridges } from './bridges';
import type { ConferenceFiles } from './conference/files';
import { EventFactory, type SwitchIdentity } from './events';
import { DubTracks } from './dub';
import { AudioForks } from './fork/forks';
import { heartbeatEvent, IdleCpu } from './heartbeat';
import { Listener, type ListenerHost, type OutboundSession } from './listener';
import { SessionCounts } from './sessions';
import { disconnectNotice, rudeRejection, type EslEvent } from './wire';

/**
 * The version this switch reports (FreeSWITCH-Version, `status`, `version`): the FreeSWITCH release
 * whose event socket it follows, marked as ours so no one mistakes it for FreeSWITCH itself.
 */
export const ESL_VERSION = '1.10.12-openvoice 64bit';

export interface EslServerOptions {
  password: string;
  /** the drachtio_mrf profile `sofia status` reports */
  profile: SipProfile;
  /** HEARTBEAT period (FreeSWITCH's default 20 s); 0: none */
  heartbeatMs?: number;
  /** time a connection has to authenticate (FreeSWITCH waits 25 s for the first command) */
  authTimeoutMs?: number;
  /** refused `auth` attempts per address within the window before its connections are refused */
  authLimit?: { max: number; windowMs: number };
  /** Max-Sessions (FreeSWITCH's default max-sessions 1000) */
  maxSessions?: number;
  /** unread bytes (events a client does not read) before its connection is dropped (default 16 MiB) */
  maxUnreadBytes?: number;
  /** the egress policy every connection made for a client goes through (uuid_audio_fork); default: the environment's */
  egress?: EgressPolicy;
  /** an audio fork's WebSocket opening handshake limit, ms (ESL_AUDIO_FORK_CONNECT_TIMEOUT_MS) */
  forkConnectTimeoutMs?: number;
  /** where the `conference` API's `play` reads and `recording` writes (ESL_SOUNDS_DIR, ESL_RECORDINGS_DIR) */
  conferenceFiles: ConferenceFiles;
  now?: () => number;
}

export interface EslServerEvents {
  /** a connection was refused or closed for its credentials: the address and why (never the password) */
  rejected: [string, string];
  /** a command's handler threw: a bug, reported; the client got `-ERR` */
  failed: [Error];
  /** a connection closed (either side), with the address it came from */
  disconnected: [string];
}

export class EslServer extends EventEmitter<EslServerEvents> implements ListenerHost {
  readonly connections = new Set<Listener>();
  /** the live channels (sip-face.ts opens and ends them) */
  readonly channels = new Map<string, OutboundSession>();
  /** which channels are bridged to which (uuid_bridge) */
  readonly bridges = new Bridges();
  readonly sessions: SessionCounts;
  readonly identity: SwitchIdentity;
  readonly events: EventFactory;
  readonly api: ApiContext;
  readonly passwordDigest: Buffer;
  readonly conferenceFiles: ConferenceFiles;
  readonly authTimeoutMs: number;
  readonly maxUnreadBytes: number;
  private readonly refusals: AuthRefusals;
  private server?: net.Server;
  /** the running server's HEARTBEAT timer: armed by listen(), cleared by close() */
  private heartbeatTimer: NodeJS.Timeout | null = null;

  constructor(private readonly opts: EslServerOptions) {
    super();
    if (!opts.password) throw new Error('the event socket needs a password');
    const now = opts.now ?? Date.now;
    this.passwordDigest = createHash('sha256').update(opts.password, 'utf8').digest();
    this.conferenceFiles = opts.conferenceFiles;
    this.authTimeoutMs = opts.authTimeoutMs ?? 25_000;
    this.maxUnreadBytes = opts.maxUnreadBytes ?? 16 * 1024 * 1024;
    this.refusals = new AuthRefusals(opts.authLimit ?? { max: 5, windowMs: 60_000 }, now);
    this.sessions = new SessionCounts(opts.maxSessions ?? 1000, now);
    this.identity = { coreUuid: randomUUID(), hostname: os.hostname(), ipv4: firstIpv4(), ipv6: '::1', version: ESL_VERSION };
    this.events = new EventFactory(this.identity, now);
    const cpu = new IdleCpu();
    const forks = new AudioForks({
      channels: this.channels,
      events: this.events,
      publish: (ev) => this.publish(ev),
      egress: opts.egress ?? egressPolicyFor(),
      connectTimeoutMs: opts.forkConnectTimeoutMs ?? 5000,
      failed: (e) => this.failed(e),
    });
    this.api = {
      id: this.identity,
      startedAt: now(),
      now,
      sessions: this.sessions,
      profile: opts.profile,
      idleCpu: () => cpu.read(),
      channels: this.channels,
      bridges: this.bridges,
      events: this.events,
      forks,
      dub: new DubTracks({ channels: this.channels }),
      failed: (e) => this.failed(e),
    };
  }

  listen(port: number, host = '127.0.0.1'): Promise<net.AddressInfo> {
    if (this.server) throw new Error('already listening');
    const server = guardServer(net.createServer((socket) => this.accept(socket)));
    this.server = server;
    return new Promise((resolve, reject) => {
      // a listen that fails (the port taken) leaves the server able to listen again
      const failed = (e: Error) => {
        this.server = undefined;
        reject(e);
      };
      server.once('error', failed);
      server.listen(port, host, () => {
        server.off('error', failed);
        const every = this.opts.heartbeatMs ?? 20_000;
        if (every > 0) this.heartbeatTimer = setInterval(() => this.heartbeat(), every);
        resolve(server.address() as net.AddressInfo);
      });
    });
  }

  address(): net.AddressInfo | undefined {
    return (this.server?.address() as net.AddressInfo | null) ?? undefined;
  }

  /** Fires one HEARTBEAT now (the timer calls this). */
  heartbeat(): void {
    this.publish(heartbeatEvent(this.events, this.api));
  }

  publish(ev: EslEvent): void {
    for (const l of this.connections) l.deliver(ev);
  }

  refused(address: string, reason: string, counts = true): void {
    if (counts) this.refusals.refused(address);
    this.emit('rejected', address, reason);
  }

  blocked(address: string): boolean {
    return this.refusals.blocked(address);
  }

  /** Whether an authenticated inbound connection comes from `host` (the outbound socket goes only there). */
  authenticatedFrom(host: string): boolean {
    const want = host.replace(/^::ffff:/, '');
    for (const l of this.connections) if (!l.session && l.authed && l.address.replace(/^::ffff:/, '') === want) return true;
    return false;
  }

  gone(l: Listener): void {
    if (this.connections.delete(l)) this.emit('disconnected', l.address);
  }

  failed(err: Error): void {
    this.emit('failed', err);
  }

  /** Says goodbye to every connection and stops listening. */
  async close(): Promise<void> {
    if (this.heartbeatTimer) clearInterval(this.heartbeatTimer);
    this.heartbeatTimer = null;
    for (const l of [...this.connections]) l.close('The system is being shut down.\n');
    const server = this.server;
    this.server = undefined;
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** An outbound connection we dialled for a channel (its socket already guarded). */
  adopt(socket: net.Socket, session: OutboundSession): Listener {
    const l = new Listener(socket, this, session);
    this.connections.add(l);
    return l;
  }

  private accept(socket: net.Socket): void {
    const address = socket.remoteAddress ?? '';
    if (this.refusals.blocked(address)) {
      // as FreeSWITCH's ACL refusal: the rejection, then the goodbye, then the socket closes
      socket.end(rudeRejection() + disconnectNotice(), () => socket.destroy());
      this.emit('rejected', address, 'too many refused auth attempts');
      return;
    }
    this.connections.add(new Listener(socket, this));
  }
}

/** FreeSWITCH-IPv4: the host's first external IPv4 address, else loopback. */
function firstIpv4(): string {
  for (const list of Object.values(os.networkInterfaces())) {
    for (const i of list ?? []) if (i.family === 'IPv4' && !i.internal) return i.address;
  }
  return '127.0.0.1';
}
