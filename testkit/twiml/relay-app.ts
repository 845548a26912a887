/**
 * A ConversationRelay app on loopback, written from Twilio's ConversationRelay docs: a WebSocket
 * server that checks X-Twilio-Signature on the upgrade with the official `twilio.validateRequest`
 * (the URL as dialled, no parameters), records every message the platform sends with its arrival
 * time, and answers through `onMessage` (a test's script) with text, play, sendDigits, language and
 * end messages.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import twilio from 'twilio';
import { WebSocketServer, type WebSocket } from 'ws';

export interface RelayMessage {
  type: string;
  at: number;
  [k: string]: unknown;
}

export interface RelaySession {
  path: string;
  signed: boolean;
  messages: RelayMessage[];
  ws: WebSocket;
  closed: boolean;
  send(m: Record<string, unknown>): void;
  /** Sends raw text (a malformed message). */
  sendRaw(text: string): void;
}

export class RelayApp {
  readonly sessions: RelaySession[] = [];
  /** The script: called for each message the platform sends. */
  onMessage: (s: RelaySession, m: RelayMessage) => void = () => undefined;
  private readonly wss = new WebSocketServer({ noServer: true });

  private constructor(
    private readonly server: http.Server,
    readonly base: string,
    private readonly authToken: string,
  ) {
    server.on('upgrade', (req, socket, head) => {
      const url = `${this.base}${req.url ?? '/'}`;
      const sig = String(req.headers['x-twilio-signature'] ?? '');
      const signed = twilio.validateRequest(this.authToken, sig, url, {});
      this.wss.handleUpgrade(req, socket, head, (ws) => this.session(ws, req.url ?? '/', signed));
    });
  }

  static async start(authToken: string): Promise<RelayApp> {
    const server = http.createServer((_req, res) => res.writeHead(404).end());
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    return new RelayApp(server, `ws://127.0.0.1:${(server.address() as AddressInfo).port}`, authToken);
  }

  url(path: string): string {
    return this.base + path;
  }

  private session(ws: WebSocket, path: string, signed: boolean): void {
    const s: RelaySession = {
      path,
      signed,
      messages: [],
      ws,
      closed: false,
      send: (m) => ws.readyState === ws.OPEN && ws.send(JSON.stringify(m)),
      sendRaw: (t) => ws.readyState === ws.OPEN && ws.send(t),
    };
    this.sessions.push(s);
    ws.on('close', () => (s.closed = true));
    ws.on('message', (data) => {
      const m = { ...(JSON.parse(data.toString()) as Record<string, unknown>), at: Date.now() } as RelayMessage;
      s.messages.push(m);
      this.onMessage(s, m);
    });
  }

  /** The first session on `path` once it has a message of `type` (waits up to timeoutMs). */
  async message(path: string, type: string, timeoutMs = 20_000): Promise<RelayMessage> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const hit = this.sessions.find((s) => s.path === path)?.messages.find((m) => m.type === type);
      if (hit) return hit;
      if (Date.now() > deadline) throw new Error(`no ${type} message on ${path} within ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  async close(): Promise<void> {
    for (const c of this.wss.clients) c.terminate();
    this.wss.close();
    this.server.closeAllConnections();
    await new Promise<void>((r) => this.server.close(() => r()));
  }
}
