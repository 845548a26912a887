// What the speech-to-speech vendor stand-ins on loopback share (deepgram-agent-server.ts,
// gemini-live-server.ts): the HTTP server that takes the WebSocket upgrade, the figures every test
// reads, and a response's audio paced faster than real time.
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { WebSocketServer, type ServerOptions } from 'ws';
import type { RealtimeScript } from './realtime-server';

/** What each stand-in keeps for the tests to read. */
export interface SpeechStandIn {
  /** the base URL the vendor's client is given */
  url: string;
  key: string;
  script: RealtimeScript;
  /** ms before each response's first audio (the model's time to first byte) */
  latencyMs: number;
  speechStartedAt: number[];
  /** when each turn's first audio went out */
  firstAudioAt: number[];
  /** ms of caller audio received */
  appendedMs: number;
  /** sessions refused for their key */
  refused: number;
  close(): Promise<void>;
}

/**
 * Serves `state` (its figures zeroed here) on a free loopback port: each upgrade goes to `upgrade`
 * with the WebSocket server (noServer, `wss` its options); `close` ends every client and the server.
 */
export async function serveStandIn<S extends SpeechStandIn>(
  scheme: 'http' | 'ws',
  own: Omit<S, keyof SpeechStandIn>,
  common: Pick<SpeechStandIn, 'key' | 'script'>,
  wssOptions: ServerOptions,
  upgrade: (state: S, wss: WebSocketServer, req: http.IncomingMessage, socket: Socket, head: Buffer) => void,
): Promise<S> {
  const server = http.createServer((_req, res) => res.writeHead(404).end());
  const wss = new WebSocketServer({ ...wssOptions, noServer: true });
  const state = {
    ...own,
    ...common,
    url: '',
    latencyMs: 0,
    speechStartedAt: [],
    firstAudioAt: [],
    appendedMs: 0,
    refused: 0,
    async close() {
      for (const c of wss.clients) c.terminate();
      wss.close();
      await new Promise<void>((r) => server.close(() => r()));
    },
  } as SpeechStandIn as S;
  server.on('upgrade', (req: http.IncomingMessage, socket: Socket, head: Buffer) => upgrade(state, wss, req, socket, head));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  state.url = `${scheme}://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return state;
}

/**
 * A response's audio: after `s.latencyMs`, `first` (its first audio's time kept), then `chunk(ms, sentMs)`
 * of at most 200 ms every 50 ms (four times real time) until `totalMs`, then `done`. `stop` ends it at
 * any point (no `done`); `ended` runs once, however it ends.
 */
export function pacedAudio(s: SpeechStandIn, totalMs: number, on: { first?(): void; chunk(ms: number, sentMs: number): void; done(): void; ended(): void }): { stop(): void } {
  let sent = 0;
  let timer: NodeJS.Timeout | null = null;
  let over = false;
  const start = setTimeout(() => {
    s.firstAudioAt.push(Date.now());
    on.first?.();
    timer = setInterval(() => {
      if (sent >= totalMs) {
        stop();
        on.done();
        return;
      }
      const ms = Math.min(200, totalMs - sent);
      on.chunk(ms, sent);
      sent += ms;
    }, 50);
  }, s.latencyMs);
  const stop = () => {
    clearTimeout(start);
    if (timer) clearInterval(timer);
    if (over) return;
    over = true;
    on.ended();
  };
  return { stop };
}
