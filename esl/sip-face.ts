/**
 * The drachtio_mrf SIP profile: a drachtio-srf application (on the sip-server whose SIP address
 * `sofia status` reports) that answers fsmrf's INVITEs the way FreeSWITCH's mrf dialplan does: a
 * channel on a media-engine endpoint, answered with its SDP, then an outbound event socket to the
 * INVITE's `X-esl-outbound` address for the channel (`socket <host:port> async full`). One call per
 * channel: its dialog, its endpoint, its outbound connection; `hangup` ends all three once.
 */
import { breakRecord } from './apps/record';
import net from 'node:net';
import type Srf from 'drachtio-srf';
import { guardSocket } from '../core/net/socket-guard';
import type { DtmfEvent, MediaServer } from '../media-engine';
import { AppRefused, appFor } from './apps';
import { Channel } from './channel';
import { ConferenceRooms } from './conference/rooms';
import type { EventName } from './events';
import { expandVariables } from './expand';
import { Listener, type OutboundSession } from './listener';
import { MEDIA_TIMEOUT_HEADER } from '../core/sip/media-timeout-header';
import { MediaTimeout } from './media-timeout';
import type { EslServer } from './server';

/** `host:port` (IPv4 or a name) of X-esl-outbound; null when it is not one. */
export function parseHostPort(v: string): { host: string; port: number } | null {
  const m = /^([A-Za-z0-9.-]+):(\d{1,5})$/.exec(v.trim());
  if (!m || Number(m[2]) < 1 || Number(m[2]) > 65535) return null;
  return { host: m[1]!, port: Number(m[2]) };
}

const userOf = (aor: string) => /sip:([^@;>]+)@/.exec(aor)?.[1] ?? '';

/** DTMF-Source as switch_channel_queue_dtmf names the engine's sources. */
const DTMF_SOURCE: Record<DtmfEvent['source'], string> = { rfc2833: 'RTP', inband: 'INBAND_AUDIO', info: 'ENDPOINT' };

/** One answered channel and what it holds. */
class ChannelCall implements OutboundSession {
  listener: Listener | null = null;
  /** hung up (read by the outbound socket's connect: one that connects late gets its goodbye at once) */
  ended = false;
  /** the applications sendmsg asked for, one after another */
  private queue: Promise<void> = Promise.resolve();
  /** completes the application running now (a hang-up ends it) */
  private running: (() => void) | null = null;
  /** aborted at hang-up: a running application stops waiting, its timers cancelled */
  private readonly abort = new AbortController();
  /** the queue's generation: `uuid_break … all` drops the applications queued before it */
  private generation = 0;
  /** the channel's media timeout (media_timeout / rtp_timeout_sec): MEDIA_TIMEOUT when the far end goes quiet */
  private readonly mediaTimeout: MediaTimeout;

  constructor(
    readonly channel: Channel,
    private readonly dialog: Srf.Dialog,
    private readonly esl: EslServer,
  ) {
    dialog.on('destroy', () => this.hangup('NORMAL_CLEARING', false));
    this.mediaTimeout = new MediaTimeout(
      channel.endpoint,
      () => this.hangup('MEDIA_TIMEOUT'),
      (e) => this.esl.failed(e),
    );
    // the answer activates the channel's RTP: the media timeout is read now (never at a later set)
    this.mediaTimeout.activate(channel.variables);
    dialog.on('modify', (req: Srf.SrfRequest, res: Srf.SrfResponse) => void this.modify(req, res));
    // every digit the endpoint receives is a DTMF event (switch_channel_queue_dtmf); DTMF-Duration in samples at 8 kHz
    channel.endpoint.on('dtmf', (e) =>
      this.fire('DTMF', [
        ['DTMF-Digit', e.dtmf],
        ['DTMF-Duration', String(e.duration * 8)],
        ['DTMF-Source', DTMF_SOURCE[e.source]],
      ]),
    );
  }

  /**
   * A dialplan application on the channel (sendmsg execute), run after the ones before it (as
   * FreeSWITCH with `event-lock`; `hangup` at once): CHANNEL_EXECUTE, the application (apps/index.ts), then
   * CHANNEL_EXECUTE_COMPLETE with the same Application-UUID (fsmrf waits for it) and the
   * Application-Response. An application not served hangs the channel up with
   * DESTINATION_OUT_OF_ORDER, as FreeSWITCH does for one no module registered: never a silent success.
   */
  execute(app: string, arg: string, appUuid: string | undefined): void {
    if (this.ended) return;
    // `hangup` does not wait: FreeSWITCH runs a sendmsg that comes during an application inside it
    // (switch_ivr_parse_all_events), so fsmrf's destroy ends a playback at once
    if (app === 'hangup') return void this.run(app, arg, appUuid);
    const gen = this.generation;
    this.queue = this.queue.then(() => (gen === this.generation ? this.run(app, arg, appUuid) : undefined)).catch((e: unknown) => this.esl.failed(e instanceof Error ? e : new Error(String(e))));
  }

  private async run(app: string, given: string, appUuid: string | undefined): Promise<void> {
    if (this.ended) return;
    const arg = expandVariables(this.channel.variables, given, (e) => this.esl.failed(e));
    const id: [string, string][] = [
      ['Application', app],
      ['Application-Data', arg],
    ];
    if (appUuid) id.push(['Application-UUID', appUuid]);
    this.fire('CHANNEL_EXECUTE', id);
    if (app === 'hangup') return this.hangup(arg.trim() || 'NORMAL_CLEARING');
    const impl = appFor(app);
    if (!impl) return this.hangup('DESTINATION_OUT_OF_ORDER');
    let completed = false;
    const complete = (response: string) => {
      if (completed) return;
      completed = true;
      this.running = null;
      this.fire('CHANNEL_EXECUTE_COMPLETE', [...id, ['Application-Response', response]]);
    };
    // a hang-up while it runs ends it first: its completion comes before CHANNEL_HANGUP, as FreeSWITCH's
    this.running = () => complete('_none_');
    try {
      const ctx = { channel: this.channel, fire: this.fire.bind(this), signal: this.abort.signal, failed: (e: Error) => this.esl.failed(e), conferences: this.esl.api.conferences };
      complete(await impl(ctx, arg));
    } catch (e) {
      if (this.ended) return complete('_none_');
      if (!(e instanceof AppRefused)) this.esl.failed(e instanceof Error ? e : new Error(String(e)));
      complete('_none_');
      this.hangup('DESTINATION_OUT_OF_ORDER');
    }
  }

  /**
   * A re-INVITE (fsmrf's `modify`, e.g. the far end's SDP for a 3pcc channel): the endpoint takes the
   * offer and the answer is its SDP; the media variables follow. An offer the engine refuses gets 488
   * and the channel keeps its media, as sofia answers a renegotiation that fails.
   */
  private async modify(req: Srf.SrfRequest, res: Srf.SrfResponse): Promise<void> {
    if (this.ended) return void res.send(481, 'Call/Transaction Does Not Exist', {});
    if (!req.body) return void res.send(200, { body: this.channel.endpoint.local.sdp });
    try {
      await this.channel.endpoint.modify(req.body);
    } catch (e) {
      return void res.send(488, 'Not Acceptable Here', { headers: { Warning: `399 esl "${(e as Error).message.replace(/["\\\r\n]/g, ' ').slice(0, 100)}"` } });
    }
    this.channel.setMedia(req.body);
    // a re-INVITE activates the RTP again: FreeSWITCH reads the media timeout variables again
    this.mediaTimeout.activate(this.channel.variables, req.body);
    res.send(200, { body: this.channel.endpoint.local.sdp });
  }

  /** uuid_break: stops what the channel plays (the running application goes on); `all` drops the queued ones too. */
  async breakMedia(all: boolean): Promise<void> {
    if (all) this.generation++;
    if (!this.ended) await Promise.all([this.channel.endpoint.stopPlayback(), breakRecord(this.channel.endpoint)]);
  }

  /** A channel event to every connection subscribed to it. */
  fire(name: EventName, own: [string, string][] = [], opts: { subclass?: string; body?: string } = {}): void {
    this.esl.publish(this.channel.event(this.esl.events, name, own, opts));
  }

  /** Ends the channel once: BYE (unless the far end sent it), the endpoint, the events, the outbound socket. */
  hangup(cause: string, sendBye = true): void {
    if (this.ended) return;
    this.ended = true;
    // the channel is down before anything it runs is told (switch_channel_perform_hangup): a conference's
    // del-member for it says Answer-State hangup, as FreeSWITCH's does
    this.channel.callState = 'HANGUP';
    this.channel.hangupCause = cause;
    this.mediaTimeout.close();
    this.abort.abort();
    this.running?.();
    // the bridge ends first (CHANNEL_UNBRIDGE before CHANNEL_HANGUP); the partner stays up, parked
    void this.esl.bridges.hungUp(this).catch((e: unknown) => this.esl.failed(e instanceof Error ? e : new Error(String(e))));
    // drachtio-srf's destroy() returns a promise that rejects when the BYE cannot go out (sip-server gone)
    if (sendBye) void Promise.resolve(this.dialog.destroy() as unknown).catch((e: unknown) => this.esl.failed(e instanceof Error ? e : new Error(String(e))));
    void this.channel.endpoint.destroy().catch((e: unknown) => this.esl.failed(e instanceof Error ? e : new Error(String(e))));
    this.esl.sessions.close(this.channel.uuid);
    this.esl.channels.delete(this.channel.uuid);
    // switch_channel_perform_hangup: the call state's change first (fsmrf's Endpoint reads the cause from it)
    this.fire('CHANNEL_CALLSTATE', [
      ['Original-Channel-Call-State', 'ACTIVE'],
      ['Channel-Call-State-Number', '7'],
    ]);
    this.fire('CHANNEL_HANGUP', [['Hangup-Cause', cause]]);
    this.fire('CHANNEL_HANGUP_COMPLETE', [['Hangup-Cause', cause]]);
    this.listener?.channelGone();
  }
}

/**
 * How long the outbound socket's connect may take: as long as fsmrf waits for it (its createEndpoint, after
 * the 200, lib/mediaserver.js: 4 s, then its BYE), so the switch never keeps dialling for a leg its
 * client gave up on. FreeSWITCH's socket application sets no limit of its own (the system's TCP connect
 * timeout). A socket that still connects after the channel ended gets its goodbye and is closed (dial).
 */
export const OUTBOUND_CONNECT_MS = 4000;

export interface SipFaceOptions {
  /** the outbound socket's connect limit (ms): OUTBOUND_CONNECT_MS, fsmrf's wait; shorter only in tests */
  outboundConnectMs?: number;
}

export class SipFace {
  /** the outbound socket's connect limit in use (ms) */
  readonly outboundConnectMs: number;

  constructor(
    private readonly srf: Srf,
    private readonly engine: MediaServer,
    private readonly esl: EslServer,
    opts: SipFaceOptions = {},
  ) {
    const ms = opts.outboundConnectMs ?? OUTBOUND_CONNECT_MS;
    if (!Number.isInteger(ms) || ms < 1) throw new Error(`outboundConnectMs: want a whole number of ms >= 1, got ${ms}`);
    this.outboundConnectMs = ms;
    // the conferences of this switch: the rooms' mixers are the engine's, the API reaches them through esl.api
    esl.api.conferences ??= new ConferenceRooms(engine, esl);
  }

  /** Takes the INVITEs of the application's sip-server. */
  start(): void {
    this.srf.invite((req, res) => void this.onInvite(req, res).catch((e: unknown) => this.esl.failed(e instanceof Error ? e : new Error(String(e)))));
  }

  private async onInvite(req: Srf.SrfRequest, res: Srf.SrfResponse): Promise<void> {
    const outbound = parseHostPort(req.get('X-esl-outbound') ?? '');
    if (!outbound) return void res.send(404, 'No Route Destination', {}); // the mrf dialplan matches nothing else
    // the outbound socket goes only to a host that holds an authenticated inbound connection (the fsmrf
    // application that asked for the channel), never to an address any INVITE names (FreeSWITCH: its ACL)
    if (!this.esl.authenticatedFrom(outbound.host)) return void res.send(403, 'Forbidden', {});
    if (this.esl.sessions.count >= this.esl.sessions.max) return void res.send(503, 'Maximum Calls In Progress', {});
    let endpoint;
    try {
      endpoint = await this.engine.createEndpoint(req.body ? { remoteSdp: req.body } : {});
    } catch (e) {
      return void res.send(488, 'Not Acceptable Here', { headers: { Warning: `399 esl "${(e as Error).message.replace(/["\\\r\n]/g, ' ').slice(0, 100)}"` } });
    }
    const channel = new Channel(
      endpoint,
      {
        callId: req.get('Call-ID'),
        userAgent: req.get('User-Agent') ?? '',
        fromUser: userOf(req.get('From')),
        toUser: userOf(req.uri),
        remoteSdp: req.body || null,
        eslOutbound: `${outbound.host}:${outbound.port}`,
      },
      'drachtio_mrf',
    );
    // the mrf dialplan's `set media_timeout=${sip_h_X-Media-Timeout}` before its answer (freeswitch/dialplan/mrf.xml)
    const mediaTimeout = req.get(MEDIA_TIMEOUT_HEADER);
    if (mediaTimeout) channel.variables.set('media_timeout', mediaTimeout);
    if (!this.esl.sessions.open(channel.uuid)) {
      await endpoint.destroy();
      return void res.send(503, 'Maximum Calls In Progress', {});
    }
    let dialog: Srf.Dialog;
    try {
      dialog = await this.srf.createUAS(req, res, { localSdp: endpoint.local.sdp });
    } catch {
      this.esl.sessions.close(channel.uuid);
      await endpoint.destroy();
      return;
    }
    const call = new ChannelCall(channel, dialog, this.esl);
    this.esl.channels.set(channel.uuid, call);
    this.dial(call, outbound);
  }

  /** The outbound socket (FreeSWITCH's `socket` application): a failed connect hangs the channel up. */
  private dial(call: ChannelCall, to: { host: string; port: number }): void {
    const socket = new net.Socket();
    guardSocket(socket);
    const failed = () => {
      socket.destroy();
      call.hangup('DESTINATION_OUT_OF_ORDER');
    };
    socket.once('error', failed);
    // the connect phase's timer: an address that never answers hangs the channel up
    socket.setTimeout(this.outboundConnectMs, failed);
    socket.connect(to.port, to.host, () => {
      socket.off('error', failed);
      socket.setTimeout(0);
      socket.removeListener('timeout', failed);
      call.listener = this.esl.adopt(socket, call);
      // the channel hung up while the socket connected (its goodbye could not be sent then): sent now, the socket closed
      if (call.ended) call.listener.channelGone();
    });
  }
}
