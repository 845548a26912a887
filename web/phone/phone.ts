/**
 * The phone itself: one JsSIP user agent over SIP WebSocket, at most one call at a time, driven
 * through the two state machines of state.ts. The UI (ui.tsx) and the embedding bridge (embed.ts)
 * only call these methods and listen to the typed events.
 */
import * as JsSIP from 'jssip';
import type { RTCSession } from 'jssip/lib/RTCSession';
import type { RTCSessionEvent } from 'jssip/lib/UA';
import { callTransition, IDLE, isLive, regTransition, type CallEvent, type CallState, type RegEvent, type RegState } from './state';
import { Emitter } from './emitter';
import { toSipUri } from './target';
import { loopbackOnlySdp } from './sdp';
import { SipWebSocket } from './socket';

export interface SipCredentials {
  /** ws:// or wss:// URL of the platform's SIP WebSocket. */
  wsUrl: string;
  /** The address-of-record, `sip:user@domain`. */
  uri: string;
  /** Digest username when it differs from the URI user (an agent's browser credential). */
  authorizationUser?: string;
  password: string;
  displayName?: string;
}

export interface PhoneOptions {
  /** false: no echo cancellation, noise suppression or gain control (tone tests, music on the line). */
  audioProcessing: boolean;
  /** true: offer and accept loopback ICE candidates only (loopback tests and development). */
  loopbackOnly: boolean;
  /** Where remote audio plays. */
  audio: HTMLAudioElement;
}

export interface PhoneEvents {
  registration: { state: RegState; cause: string };
  call: CallState;
  dtmf: { tone: string };
}

/** Set-up timing of the last outgoing call (performance.now() ms; 0 until it happened). */
export interface SetupTiming {
  dialAt: number;
  /** The first INVITE handed to the WebSocket (after getUserMedia and ICE gathering). */
  inviteAt: number;
  /** The 2xx to the INVITE. */
  answeredAt: number;
}

export interface AudioStats {
  inbound: { packetsReceived: number; audioLevel: number; bytesReceived: number; /** RMS level over the whole call (0..1) */ averageLevel: number } | null;
  outbound: { packetsSent: number; bytesSent: number } | null;
}

export class Phone extends Emitter<PhoneEvents> {
  reg: RegState = 'signed-out';
  regCause = '';
  call: CallState = IDLE;
  timing: SetupTiming = { dialAt: 0, inviteAt: 0, answeredAt: 0 };
  private ua: JsSIP.UA | null = null;
  private session: RTCSession | null = null;
  private domain = '';

  constructor(private readonly opts: PhoneOptions) {
    super();
  }

  private onReg(e: RegEvent, cause = ''): void {
    this.reg = regTransition(this.reg, e);
    this.regCause = cause;
    this.emit('registration', { state: this.reg, cause });
  }

  private onCall(e: CallEvent): void {
    const next = callTransition(this.call, e);
    if (next === this.call) return;
    this.call = next;
    this.emit('call', next);
  }

  /** Connects and registers; resolves once the UA is started (registration is reported by events). */
  start(c: SipCredentials): void {
    this.stop();
    const uri = JsSIP.URI.parse(c.uri);
    if (!uri) throw new Error(`not a SIP URI: ${c.uri}`);
    this.domain = uri.host;
    const ua = new JsSIP.UA({
      sockets: [new SipWebSocket(c.wsUrl)],
      uri: c.uri,
      authorization_user: c.authorizationUser,
      password: c.password,
      display_name: c.displayName,
      register: true,
      register_expires: 300,
      session_timers: false,
      user_agent: 'openvoice-webphone',
    });
    this.ua = ua;
    ua.on('registered', () => this.onReg({ type: 'registered' }));
    ua.on('unregistered', (e) => this.onReg({ type: 'unregistered' }, e.cause ?? ''));
    ua.on('registrationFailed', (e) => this.onReg({ type: 'failed', cause: e.cause ?? 'failed' }, e.cause ?? 'failed'));
    ua.on('disconnected', () => {
      if (this.reg !== 'signed-out') this.onReg({ type: 'failed', cause: 'WebSocket closed' }, 'WebSocket closed');
    });
    ua.on('newRTCSession', (e: RTCSessionEvent) => this.adopt(e.session, e.originator === 'remote'));
    this.onReg({ type: 'start' });
    ua.start();
  }

  stop(): void {
    if (this.session && isLive(this.call)) this.session.terminate();
    this.ua?.stop();
    this.ua = null;
    if (this.reg !== 'signed-out') this.onReg({ type: 'stop' });
  }

  private mediaConstraints(): MediaStreamConstraints {
    const p = this.opts.audioProcessing;
    return { audio: { echoCancellation: p, noiseSuppression: p, autoGainControl: p }, video: false };
  }

  /** Dials a number, an extension or a SIP URI. */
  dial(target: string): void {
    if (!this.ua || this.reg !== 'registered') throw new Error('not registered');
    if (isLive(this.call)) throw new Error('a call is in progress');
    const uri = toSipUri(target, this.domain);
    this.timing = { dialAt: performance.now(), inviteAt: 0, answeredAt: 0 };
    this.onCall({ type: 'dial', peer: target.trim() });
    this.ua.call(uri, { mediaConstraints: this.mediaConstraints(), pcConfig: { iceServers: [] }, rtcOfferConstraints: { offerToReceiveAudio: true, offerToReceiveVideo: false } });
  }

  answer(): void {
    if (this.call.phase !== 'incoming' || !this.session) return;
    this.session.answer({ mediaConstraints: this.mediaConstraints(), pcConfig: { iceServers: [] } });
  }

  hangup(): void {
    if (this.session && isLive(this.call)) this.session.terminate();
    else this.onCall({ type: 'clear' });
  }

  setMuted(muted: boolean): void {
    if (!this.session || (this.call.phase !== 'connected' && this.call.phase !== 'held')) return;
    if (muted) this.session.mute({ audio: true });
    else this.session.unmute({ audio: true });
  }

  setHeld(held: boolean): void {
    if (!this.session) return;
    if (held && this.call.phase === 'connected') this.session.hold();
    if (!held && this.call.phase === 'held') this.session.unhold();
  }

  /** RFC 4733 telephone-events in the media (not SIP INFO). */
  sendDtmf(tones: string): void {
    if (!this.session || this.call.phase !== 'connected') return;
    if (!/^[0-9A-D#*]+$/i.test(tones)) throw new Error(`not DTMF: ${tones}`);
    this.session.sendDTMF(tones, { transportType: JsSIP.C.DTMF_TRANSPORT.RFC2833, duration: 160, interToneGap: 100 });
    for (const tone of tones) this.emit('dtmf', { tone });
  }

  /** getStats of the call's audio (inbound-rtp and outbound-rtp), or nulls when there is no call. */
  async stats(): Promise<AudioStats> {
    const pc = this.session?.connection as RTCPeerConnection | undefined;
    const out: AudioStats = { inbound: null, outbound: null };
    if (!pc) return out;
    (await pc.getStats()).forEach((r: Record<string, unknown>) => {
      if (r.type === 'inbound-rtp' && r.kind === 'audio') {
        const energy = Number(r.totalAudioEnergy ?? 0);
        const duration = Number(r.totalSamplesDuration ?? 0);
        out.inbound = {
          packetsReceived: Number(r.packetsReceived ?? 0),
          audioLevel: Number(r.audioLevel ?? 0),
          bytesReceived: Number(r.bytesReceived ?? 0),
          averageLevel: duration > 0 ? Math.sqrt(energy / duration) : 0,
        };
      }
      if (r.type === 'outbound-rtp' && r.kind === 'audio') out.outbound = { packetsSent: Number(r.packetsSent ?? 0), bytesSent: Number(r.bytesSent ?? 0) };
    });
    return out;
  }

  private adopt(session: RTCSession, incoming: boolean): void {
    // one call at a time: a second incoming call is busy (our own dial() made the call live already)
    if (incoming && isLive(this.call)) {
      session.terminate({ status_code: 486, reason_phrase: 'Busy Here' });
      return;
    }
    this.session = session;
    if (incoming) {
      const from = session.remote_identity;
      this.onCall({ type: 'incoming', peer: from.display_name || from.uri.user || from.uri.toString() });
    }
    if (this.opts.loopbackOnly) {
      session.on('sdp', (e) => {
        if (e.originator === 'local') e.sdp = loopbackOnlySdp(e.sdp);
      });
    }
    session.on('peerconnection', (e) => this.attachAudio(e.peerconnection as RTCPeerConnection));
    if (session.connection) this.attachAudio(session.connection as RTCPeerConnection);
    if (!incoming) {
      session.on('sending', () => {
        if (!this.timing.inviteAt) this.timing.inviteAt = performance.now();
      });
    }
    session.on('progress', () => this.onCall({ type: 'progress' }));
    session.on('accepted', () => {
      if (!incoming) this.timing.answeredAt = performance.now();
      this.onCall({ type: 'answered', at: Date.now() });
    });
    session.on('confirmed', () => this.onCall({ type: 'answered', at: Date.now() }));
    session.on('hold', () => this.onCall({ type: 'hold' }));
    session.on('unhold', () => this.onCall({ type: 'unhold' }));
    session.on('muted', () => this.onCall({ type: 'mute', muted: true }));
    session.on('unmuted', () => this.onCall({ type: 'mute', muted: false }));
    const ended = (by: string, cause: string, reasonHeader: string) => {
      this.onCall({ type: 'ended', reason: reasonHeader || cause, by });
      if (this.session === session) this.session = null;
    };
    session.on('ended', (e) => ended(e.originator, e.cause, reasonOf(e.message)));
    session.on('failed', (e) => ended(e.originator, e.cause, reasonOf(e.message)));
  }

  private attachAudio(pc: RTCPeerConnection): void {
    pc.addEventListener('track', (ev) => {
      const stream = ev.streams[0] ?? new MediaStream([ev.track]);
      this.opts.audio.srcObject = stream;
      void this.opts.audio.play().catch(() => undefined);
    });
  }
}

/** The Reason header of a BYE/CANCEL/response (RFC 3326), e.g. `Q.850;cause=41;text="media relay lost"`. */
function reasonOf(message: unknown): string {
  const m = message as { getHeader?: (name: string) => string | undefined } | null | undefined;
  const raw = typeof m?.getHeader === 'function' ? m.getHeader('Reason') : undefined;
  if (!raw) return '';
  const text = /text="([^"]*)"/.exec(raw);
  return text ? text[1]! : raw;
}
