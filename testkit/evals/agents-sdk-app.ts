/**
 * A Media Streams app built on an agent framework, as an eval target (docs/evals.md "A Media Streams
 * app with an agent framework"): OpenAI's Agents SDK as its Twilio voice agent example uses it, the
 * published @openai/agents and @openai/agents-extensions unmodified. One HTTP server on loopback:
 * `POST /incoming-call` answers TwiML `<Connect><Stream url="ws://<host>/media-stream"/>`, and the
 * WebSocket upgrade on `/media-stream` hands the socket to `TwilioRealtimeTransportLayer`, under a
 * `RealtimeSession` of a `RealtimeAgent` with one tool (`opening_hours`), connected with
 * `session.connect({ apiKey, url })` to a Realtime API (the loopback stand-in in the tests).
 *
 * The SDK's Twilio transport forwards media and marks and sends `clear` on the model's speech_started;
 * it passes every other Twilio message on as a `twilio_message` transport event, so the app answers a
 * key press itself: `session.sendMessage('The caller pressed 1.')` (a user text item and a response, the
 * SDK's public API). Options of the SDK's own, not patches: `createWebSocket` trusts the stand-in's
 * self-signed certificate (`ca`), tracing is off (it would report to api.openai.com). What the app saw
 * (tool calls with their arguments, digits, errors) is kept for the test.
 */
import http from 'node:http';
import { listenOnLoopback } from '../loopback-server';
import { RealtimeAgent, RealtimeSession, tool } from '@openai/agents/realtime';
import { TwilioRealtimeTransportLayer } from '@openai/agents-extensions';
import WebSocket, { WebSocketServer } from 'ws';
import { z } from 'zod';

export interface SdkAppOptions {
  /** the Realtime API's URL, e.g. wss://127.0.0.1:port/v1/realtime?model=gpt-realtime */
  realtimeUrl: string;
  apiKey: string;
  /** PEM of the CA the Realtime API's certificate is signed by */
  ca: string | Buffer;
  /** what the tool answers for a day */
  hours(day: string): string;
  /** the server VAD's silence that ends the caller's turn (turnDetection.silenceDurationMs) */
  silenceMs: number;
}

export interface SdkApp {
  /** the TwiML URL a number's flow fetches (POST) */
  twimlUrl: string;
  /** what the app did, in order: `tool opening_hours {"day":"today"}`, `dtmf 1`, `error <message>` */
  log: string[];
  /** the sessions, one a stream */
  sessions: RealtimeSession[];
  close(): Promise<void>;
}

export async function startSdkApp(o: SdkAppOptions): Promise<SdkApp> {
  const log: string[] = [];
  const sessions: RealtimeSession[] = [];
  const server = http.createServer((req, res) => {
    if (req.url?.split('?')[0] !== '/incoming-call') return void res.writeHead(404).end();
    // drain the form body (CallSid, From, To…), then answer
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'Content-Type': 'text/xml' });
      res.end(`<?xml version="1.0" encoding="UTF-8"?><Response><Connect><Stream url="ws://${req.headers.host}/media-stream"/></Connect></Response>`);
    });
  });
  server.on('clientError', (_e, socket) => socket.destroy());
  server.on('error', (e) => log.push(`error ${e.message}`));
  const wss = new WebSocketServer({ server, path: '/media-stream' });
  wss.on('error', (e) => log.push(`error ${e.message}`));
  wss.on('connection', (twilioWebSocket) => sessions.push(answer(twilioWebSocket, o, log)));
  const listening = await listenOnLoopback(server);
  return {
    twimlUrl: `http://127.0.0.1:${listening.port}/incoming-call`,
    log,
    sessions,
    close: () => {
      for (const s of sessions) s.close();
      for (const c of wss.clients) c.terminate();
      wss.close();
      return listening.close();
    },
  };
}

/** One Media Stream: the agent's session on the SDK's Twilio transport, its greeting asked for once connected. */
function answer(twilioWebSocket: WebSocket, o: SdkAppOptions, log: string[]): RealtimeSession {
  twilioWebSocket.on('error', (e) => log.push(`error ${e.message}`));
  const openingHours = tool({
    name: 'opening_hours',
    description: "The bakery's opening hours on a day.",
    parameters: z.object({ day: z.string() }),
    execute: async ({ day }) => {
      log.push(`tool opening_hours ${JSON.stringify({ day })}`);
      return o.hours(day);
    },
  });
  const agent = new RealtimeAgent({
    name: 'Bakery',
    instructions: 'You answer the phone for the corner bakery. Greet the caller. For opening hours call opening_hours. Answer a key press.',
    tools: [openingHours],
  });
  const transport = new TwilioRealtimeTransportLayer({
    twilioWebSocket,
    createWebSocket: async ({ url, apiKey }) => new WebSocket(url, { headers: { Authorization: `Bearer ${apiKey}` }, ca: o.ca }),
  });
  const session = new RealtimeSession(agent, {
    transport,
    model: 'gpt-realtime',
    config: { audio: { input: { turnDetection: { type: 'server_vad', silenceDurationMs: o.silenceMs } }, output: { voice: 'verse' } } },
    tracingDisabled: true,
  });
  // the transport passes Twilio's other messages on: a key press becomes a user message the model answers
  session.on('transport_event', (e) => {
    if (e.type !== 'twilio_message') return;
    const m = (e as { message?: { event?: string; dtmf?: { digit?: string } } }).message;
    if (m?.event !== 'dtmf') return;
    log.push(`dtmf ${m.dtmf?.digit ?? ''}`);
    session.sendMessage(`The caller pressed ${m.dtmf?.digit ?? ''}.`);
  });
  session.on('error', (e) => log.push(`error ${String((e.error as Error)?.message ?? JSON.stringify(e.error))}`));
  session
    .connect({ apiKey: o.apiKey, url: o.realtimeUrl })
    .then(() => session.transport.requestResponse?.())
    .catch((e: unknown) => log.push(`error ${(e as Error).message}`));
  return session;
}
