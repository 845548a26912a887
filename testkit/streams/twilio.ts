// A customer's Twilio Media Streams app for the tests and the benchmark: a real `ws` server that
// records every JSON message with its arrival time, and an HTTP server that takes stream status
// callbacks and checks their X-Twilio-Signature with the official `twilio.validateRequest`.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import twilio from 'twilio';
import { WebSocketServer, type WebSocket } from 'ws';
import { twilioAuthToken } from '../../core/twilio/auth-token';
import type { Fixture } from '../api';
import { freePort } from '../ports';
import { useStreamStack, type Stack } from './support';

export interface TwilioMsg {
  at: number;
  event: string;
  [k: string]: unknown;
}

export interface TwilioConn {
  ws: WebSocket;
  path: string;
  /** The handshake's X-Twilio-Signature ('' without one; checked by the test with twilio.validateRequest). */
  signature: string;
  msgs: TwilioMsg[];
  /** Text frames that were not JSON (none expected). */
  garbage: number;
  /** `media` messages received (kept in `msgs` too unless the app was made with `keepMedia: false`). */
  mediaCount: number;
  closed: Promise<number>;
  of(event: string): TwilioMsg[];
  /** Sends a message of the server (its streamSid filled in from `start` unless given). */
  send(m: Record<string, unknown>): void;
  streamSid(): string;
}

export interface TwilioApp {
  url: string;
  conns: TwilioConn[];
  onConnection?: (c: TwilioConn) => void;
  close(): Promise<void>;
}

/**
 * `keepMedia: false` (a benchmark's hundreds of streams in the platform's own process): `media`
 * messages are counted, not parsed and kept.
 */
export async function twilioApp(path = '/media', opts: { keepMedia?: boolean } = {}): Promise<TwilioApp> {
  const port = await freePort();
  const wss = new WebSocketServer({ host: '127.0.0.1', port });
  await new Promise<void>((r) => wss.once('listening', () => r()));
  const app: TwilioApp = {
    url: `ws://127.0.0.1:${port}${path}`,
    conns: [],
    close: () =>
      new Promise<void>((r) => {
        for (const c of wss.clients) c.terminate();
        wss.close(() => r());
      }),
  };
  wss.on('connection', (ws, req) => {
    const c = recordTwilio(ws, req.url ?? '', opts.keepMedia ?? true);
    c.signature = String(req.headers['x-twilio-signature'] ?? '');
    app.conns.push(c);
    app.onConnection?.(c);
  });
  return app;
}

/** How the platform's `media` messages begin. */
const MEDIA_START = Buffer.from('{"event":"media"');

/** Records a socket's Twilio messages (either end: our server's accepted socket, or a client's). */
export function recordTwilio(ws: WebSocket, path = '', keepMedia = true): TwilioConn {
  const c: TwilioConn = {
    ws,
    path,
    signature: '',
    msgs: [],
    garbage: 0,
    mediaCount: 0,
    closed: new Promise((r) => ws.once('close', (code) => r(code))),
    of: (event) => c.msgs.filter((m) => m.event === event),
    streamSid: () => String(c.msgs.find((m) => m.event === 'start')?.streamSid ?? ''),
    send: (m) => ws.send(JSON.stringify({ streamSid: c.streamSid(), ...m })),
  };
  ws.on('message', (data: Buffer, isBinary: boolean) => {
    if (isBinary) return void c.garbage++;
    if (!keepMedia && data.subarray(0, MEDIA_START.length).equals(MEDIA_START)) return void c.mediaCount++;
    try {
      const m = JSON.parse(data.toString()) as Record<string, unknown>;
      if (m.event === 'media') c.mediaCount++;
      c.msgs.push({ ...m, at: performance.now(), event: String(m.event) });
    } catch {
      c.garbage++;
    }
  });
  return c;
}

export interface Callback {
  method: string;
  params: Record<string, string>;
  /** What twilio.validateRequest said of the signature. */
  valid: boolean;
}

export interface CallbackSink {
  url: string;
  got: Callback[];
  close(): Promise<void>;
}

/** Takes status callbacks; `authToken()` is read per request (the customer is made after the sink). */
export async function callbackSink(authToken: () => string): Promise<CallbackSink> {
  const got: Callback[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}${req.url ?? ''}`;
      const params = req.method === 'POST' ? Object.fromEntries(new URLSearchParams(body)) : Object.fromEntries(new URL(url).searchParams);
      const valid = twilio.validateRequest(authToken(), String(req.headers['x-twilio-signature'] ?? ''), url, req.method === 'POST' ? params : {});
      got.push({ method: req.method ?? '', params, valid });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/stream-status`,
    got,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

/**
 * Mocha hooks of the Twilio stream suites: useStreamStack's stack and owner on `mediaServer`, and a status
 * callback sink checking signatures with the owner's auth token, handed to `set` once up; the sink closed after.
 */
export function useTwilioStreamStack(set: (s: { stack: Stack; owner: Fixture; sink: CallbackSink }) => void, opts: { mediaServer?: 'embedded' | 'fsmrf' } = {}): void {
  let stack: Stack;
  let owner: Fixture;
  let sink: CallbackSink | undefined;
  useStreamStack((s) => ({ stack, owner } = s), opts);
  before(async () => {
    sink = await callbackSink(() => twilioAuthToken(stack.platform.config.jwtSecret, owner.customer.id, 0));
    set({ stack, owner, sink });
  });
  after(async () => {
    await sink?.close();
  });
}
