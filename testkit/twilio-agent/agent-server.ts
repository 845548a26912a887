/**
 * A customer's voice agent written the way the OpenAI Agents SDK's Twilio example is (issue 36): a
 * `ws` server on loopback takes the Twilio Media Streams socket, and each connection gets a
 * RealtimeAgent (instructions and one tool, `hang_up`) in a RealtimeSession over the SDK's own
 * TwilioRealtimeTransportLayer, connected with `session.connect({ apiKey, url })` to the Realtime
 * API stand-in. The tool ends the call the way a Twilio app does: the official `twilio` client's
 * `calls(callSid).update({ status: 'completed' })`, pointed at the platform.
 *
 * Nothing of the SDK is patched. Two things differ from the example, both the SDK's own options:
 * `createWebSocket` opens the Realtime socket trusting the stand-in's self-signed certificate (the
 * example relies on the public CAs), and tracing is off (it would report to api.openai.com). The
 * agent asks for its greeting with `session.transport.requestResponse()` once connected. The test
 * watches the Twilio socket (every message both ways, with the time) without touching what is sent.
 */
import type { AddressInfo } from 'node:net';
import { RealtimeAgent, RealtimeSession, tool } from '@openai/agents/realtime';
import { TwilioRealtimeTransportLayer } from '@openai/agents-extensions';
import WebSocket, { WebSocketServer } from 'ws';
import { z } from 'zod';
import { recordTwilio, type TwilioConn, type TwilioMsg } from '../streams/twilio';
import type { TwilioClient } from '../twilio';

export interface AgentCall {
  /** what the platform sent (`recordTwilio`) */
  conn: TwilioConn;
  /** what the SDK sent to the platform, as sent */
  sent: TwilioMsg[];
  session: RealtimeSession;
  /** the `start` message's callSid */
  callSid: string;
  /** when the tool asked the platform to end the call, and when that request was answered (Date.now) */
  hangUpAskedAt?: number;
  hangUpAnsweredAt?: number;
  hangUpStatus?: string;
  errors: unknown[];
}

export interface AgentServer {
  url: string;
  calls: AgentCall[];
  close(): Promise<void>;
}

export interface AgentOptions {
  /** the Realtime API's URL, e.g. wss://127.0.0.1:port/v1/realtime?model=gpt-realtime */
  realtimeUrl: string;
  apiKey: string;
  /** PEM of the CA the Realtime API's certificate is signed by */
  ca: string | Buffer;
  /** the official client the tool hangs up with */
  twilio: TwilioClient;
  /** the server VAD's silence that ends a turn (turnDetection.silenceDurationMs); absent: the API's default */
  silenceMs?: number;
}

export async function startAgentServer(opts: AgentOptions): Promise<AgentServer> {
  const wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  await new Promise<void>((r) => wss.once('listening', () => r()));
  const calls: AgentCall[] = [];
  wss.on('connection', (twilioWebSocket) => calls.push(answerStream(twilioWebSocket, opts)));

  return {
    url: `ws://127.0.0.1:${(wss.address() as AddressInfo).port}/media-stream`,
    calls,
    close: () =>
      new Promise<void>((r) => {
        for (const c of calls) c.session.close();
        for (const c of wss.clients) c.terminate();
        wss.close(() => r());
      }),
  };
}

/** One Media Stream from Twilio: the SDK's agent on it (as the SDK's Twilio example), its frames out noted. */
function answerStream(twilioWebSocket: WebSocket, opts: AgentOptions): AgentCall {
  const conn = recordTwilio(twilioWebSocket, '', true);
  const sent = spyOnSends(twilioWebSocket);
  const errors: unknown[] = [];
  /** the call, once its session is made (the tool runs only after that) */
  let current: AgentCall | null = null;
  const agent = new RealtimeAgent({
    name: 'Front desk',
    instructions: 'You answer the phone for a small shop. Be brief. When the caller says goodbye, call hang_up.',
    tools: [hangUpTool(() => current!, opts)],
  });
  const transport = new TwilioRealtimeTransportLayer({
    twilioWebSocket,
    createWebSocket: async ({ url, apiKey }) => new WebSocket(url, { headers: { Authorization: `Bearer ${apiKey}` }, ca: opts.ca }),
  });
  // as the example: its `audio` config is what lets the transport's µ-law defaults in (SDK 0.18.0:
  // without one the session's PCM 24 kHz defaults are sent, and Twilio's µ-law would be misread)
  const session = new RealtimeSession(agent, {
    transport,
    model: 'gpt-realtime',
    config: {
      audio: {
        ...(opts.silenceMs !== undefined ? { input: { turnDetection: { type: 'server_vad', silenceDurationMs: opts.silenceMs } } } : {}),
        output: { voice: 'verse' },
      },
    },
    tracingDisabled: true,
  });
  const call: AgentCall = { conn, sent, session, callSid: '', errors };
  current = call;
  session.on('transport_event', (e) => {
    if (e.type !== 'twilio_message') return;
    const m = (e as { message?: { event?: string; start?: { callSid?: string } } }).message;
    if (m?.event === 'start') call.callSid = m.start?.callSid ?? '';
  });
  session.on('error', (e) => errors.push(e.error));
  void session
    .connect({ apiKey: opts.apiKey, url: opts.realtimeUrl })
    .then(() => session.transport.requestResponse?.())
    .catch((e: unknown) => errors.push(e));
  return call;
}

/** A spy, not a change: each frame the SDK sends on the socket is noted, then sent as it was. */
function spyOnSends(ws: WebSocket): TwilioMsg[] {
  const sent: TwilioMsg[] = [];
  const send = ws.send.bind(ws);
  ws.send = ((data: string, cb?: (err?: Error) => void) => {
    const m = JSON.parse(String(data)) as Record<string, unknown>;
    sent.push({ ...m, at: performance.now(), event: String(m.event) });
    send(data, cb);
  }) as typeof ws.send;
  return sent;
}

/** The agent's hang_up tool: the call completed through the official client, when it was asked and answered noted. */
function hangUpTool(callOf: () => AgentCall, opts: AgentOptions) {
  return tool({
    name: 'hang_up',
    description: 'Ends the phone call once the caller has said goodbye.',
    parameters: z.object({ reason: z.string() }),
    execute: async () => {
      const call = callOf();
      call.hangUpAskedAt = Date.now();
      try {
        const done = await opts.twilio.calls(call.callSid).update({ status: 'completed' });
        call.hangUpStatus = done.status;
      } catch (e) {
        call.errors.push(e);
        throw e;
      } finally {
        call.hangUpAnsweredAt = Date.now();
      }
      return 'The call has ended.';
    },
  });
}
