// Types for npm `drachtio-fsmrf` (5.0.x), the part the event-socket tests use: Mrf.connect and the
// MediaServer it resolves to (lib/mrf.js, lib/mediaserver.js).
declare module 'drachtio-fsmrf' {
  import { EventEmitter } from 'node:events';

  export interface ConnectOptions {
    address: string;
    port?: number;
    secret?: string;
    listenAddress?: string;
    listenPort?: number;
    advertisedAddress?: string;
    advertisedPort?: number;
    profile?: string;
  }

  /** drachtio-modesl's connection: an EventEmitter2 whose events are `esl::event::<NAME>::<uuid>`. */
  export interface EslConnection extends EventEmitter {
    connected(): boolean;
    on(event: string, listener: (...args: any[]) => void): this; // eslint-disable-line @typescript-eslint/no-explicit-any -- EventEmitter2 wildcards, untyped
  }

  export interface SipAddresses {
    udp: { address?: string };
    dtls: { address?: string };
  }

  /** An Endpoint (lib/endpoint.js): one channel on the media server, read from its CHANNEL_DATA. */
  export class Endpoint extends EventEmitter {
    readonly uuid: string;
    local: { sdp?: string; mediaIp?: string; mediaPort?: string };
    remote: { sdp?: string; mediaIp?: string; mediaPort?: string };
    sip: { callId?: string };
    dtmfType?: string;
    execute(app: string, arg?: string): Promise<unknown>;
    destroy(): Promise<void>;
  }

  export class MediaServer extends EventEmitter {
    readonly address: string;
    readonly conn: EslConnection;
    sip: { ipv4: SipAddresses; ipv6: SipAddresses };
    maxSessions: number;
    currentSessions: number;
    cps: number;
    hostname?: string;
    v4address?: string;
    v6address?: string;
    fsVersion?: string;
    cpuIdle?: number;
    hasCapability(capability: string | string[]): boolean;
    api(command: string): Promise<string>;
    createEndpoint(opts?: { remoteSdp?: string; codecs?: string | string[] }): Promise<Endpoint>;
    connected(): boolean;
    disconnect(): void;
  }

  export default class Mrf extends EventEmitter {
    constructor(srf: unknown, opts?: { customEvents?: string[] });
    connect(opts: ConnectOptions): Promise<MediaServer>;
  }
}
