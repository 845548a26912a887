/**
 * GET /v1.0/calls/{id}/media_stream?encapsulation=twilio: a call's Twilio Media Stream with the client
 * connecting to us (our extension). The same messages as external media with encapsulation twilio
 * (docs/media-streams.md): `connected`, `start` (tracks ["inbound"], no customParameters), one
 * `media` per 20 ms chunk of what the caller says, `dtmf`, `stop` when the call ends; from the
 * client `media`, `mark` and `clear`, played through the relay, paced by the relay's chunks (the
 * call's clock). Malformed client messages are ignored, as Twilio does.
 */
import { randomUUID } from 'node:crypto';
import type { RawData, WebSocket } from 'ws';
import type { AppContext } from '../context';
import type { SocketGuard } from '../ws/guard';
import { rawText } from '../../core/net/ws-text';
import { parseRelayDtmf, RELAY_CLEAR } from '../../core/streams/relay';
import { CLOSE_NORMAL } from '../../core/streams/stream-socket';
import { parseServerMessage, TwilioMessages } from '../../core/streams/twilio';
import { TwilioPlayback } from '../../core/streams/twilio-playback';
import { accountSid, callSid, toSid } from '../../core/twilio/sids';
import type { Admitted } from './admission';
import type { Session } from './attachment';

/** Unsent bytes above which media messages to the client are dropped. */
const MAX_BUFFERED = 256 * 1024;

export function runTwilio(a: Admitted, ws: WebSocket, relay: WebSocket, sessions: Set<Session>, ctx: AppContext, guard: SocketGuard): void {
  const streamSid = toSid('MZ', randomUUID());
  const msgs = new TwilioMessages({ streamSid, accountSid: accountSid(a.auth.customerId), callSid: callSid(a.id) });
  const stats = { sent: 0, dropped: 0, ignored: 0 };
  let done = false;
  const send = (text: string) => {
    if (ws.readyState === ws.OPEN) ws.send(text);
  };
  const playback = new TwilioPlayback({
    play: (pcm) => {
      if (relay.readyState === relay.OPEN) relay.send(pcm, { binary: true });
    },
    mark: (name) => send(msgs.mark(name)),
    flush: () => {
      if (relay.readyState === relay.OPEN) relay.send(RELAY_CLEAR);
    },
  });
  const close = (code: number, reason: string, stop: boolean) => {
    if (done) return;
    done = true;
    if (stop) send(msgs.stop());
    playback.reset();
    if (ws.readyState === ws.OPEN) ws.close(code, reason.slice(0, 120));
    setTimeout(() => ws.terminate(), 1000).unref();
  };
  const s: Session = { close: (code, reason) => close(code, reason, true) };
  const untrack = guard.track({ auth: a.auth, expiresAtMs: a.expiresAtMs, close: (code, reason) => close(code, reason, true) });
  sessions.add(s);
  const t0 = performance.now();
  send(msgs.connected());
  send(msgs.start(['inbound'], {}));

  relay.on('message', (data: RawData, isBinary: boolean) => {
    if (!isBinary) {
      const digit = parseRelayDtmf(rawText(data));
      if (digit) send(msgs.dtmf(digit));
      return;
    }
    playback.tick();
    if (ws.bufferedAmount > MAX_BUFFERED) return void stats.dropped++;
    send(msgs.media('inbound', performance.now() - t0, Buffer.isBuffer(data) ? data : Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data)));
    stats.sent++;
  });
  relay.on('close', (_code: number, reason: Buffer) => close(CLOSE_NORMAL, reason.toString() || 'stream ended', true));
  ws.on('message', (data: RawData, isBinary: boolean) => {
    if (done) return;
    const m = isBinary ? { kind: 'ignored' as const, why: 'a binary frame' } : parseServerMessage(rawText(data), streamSid);
    if (m.kind === 'ignored') {
      stats.ignored++;
      if (stats.ignored === 1 || stats.ignored % 50 === 0) ctx.logger.info({ call: a.id, stream: streamSid, why: m.why, ignored: stats.ignored }, 'twilio stream: client message ignored');
    } else if (m.kind === 'clear') playback.clear();
    else if (m.kind === 'mark') playback.mark(m.name);
    else playback.media(m.pcm);
  });
  ws.on('error', () => undefined);
  ws.on('close', () => {
    done = true;
    sessions.delete(s);
    untrack();
    relay.close(1000, 'client left');
    ctx.logger.info({ target: a.target, id: a.id, encapsulation: 'twilio', stream: streamSid, ...stats }, 'media stream closed');
  });
  // the node may have ended the relay while the client's upgrade was being answered
  if (relay.readyState !== relay.OPEN) close(CLOSE_NORMAL, 'stream ended', true);
}
