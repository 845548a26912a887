// Types for npm `rtpengine-client` (0.4.x), the part media-app uses: the UDP ng client.
declare module 'rtpengine-client' {
  import { EventEmitter } from 'node:events';

  /** A bencoded ng dictionary: strings, numbers, lists and dictionaries. */
  export type NgValue = string | number | NgValue[] | { [key: string]: NgValue };
  export type NgParams = { [key: string]: NgValue };
  /** An ng reply: `result` is 'ok', 'pong', 'error' (with `error-reason`) or 'load limit'. */
  export interface NgReply {
    result: string;
    'error-reason'?: string;
    sdp?: string;
    [key: string]: unknown;
  }
  export interface NgTarget {
    port: number;
    host: string;
  }

  export interface ClientOptions {
    localPort?: number;
    localAddress?: string;
    /** Per-command timeout in ms (0: wait forever). */
    timeout?: number;
    rejectOnError?: boolean;
  }

  export class Client extends EventEmitter {
    constructor(opts?: ClientOptions);
    ping(to: NgTarget): Promise<NgReply>;
    offer(to: NgTarget, params: NgParams): Promise<NgReply>;
    answer(to: NgTarget, params: NgParams): Promise<NgReply>;
    delete(to: NgTarget, params: NgParams): Promise<NgReply>;
    query(to: NgTarget, params: NgParams): Promise<NgReply>;
    list(to: NgTarget, params?: NgParams): Promise<NgReply>;
    close(): void;
  }

  export class RtpEngineError extends Error {}
}
