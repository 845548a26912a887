/**
 * One channel of the switch: a call fsmrf placed on the drachtio_mrf profile, its media on an engine
 * endpoint. Owns the channel's uuid, its variables (the `variable_*` headers fsmrf reads from
 * CHANNEL_DATA) and the headers every channel event carries.
 */
import { randomUUID } from 'node:crypto';
import type { Endpoint, NegotiatedMedia } from '../media-engine';
import type { EventFactory, EventName } from './events';
import type { EslEvent } from './wire';

/** What the SIP face knows of the INVITE that made the channel. */
export interface ChannelSip {
  callId: string;
  userAgent: string;
  fromUser: string;
  toUser: string;
  /** the caller's SDP; null for a 3pcc INVITE without one (the channel then made the offer) */
  remoteSdp: string | null;
  /** X-esl-outbound: where the outbound socket goes */
  eslOutbound: string;
}

export type CallState = 'ACTIVE' | 'HANGUP';

export class Channel {
  readonly uuid = randomUUID();
  readonly name: string;
  readonly variables = new Map<string, string>();
  callState: CallState = 'ACTIVE';
  hangupCause: string | null = null;

  constructor(
    readonly endpoint: Endpoint,
    readonly sip: ChannelSip,
    profile: string,
  ) {
    this.name = `sofia/${profile}/${sip.toUser}`;
    const vars: [string, string][] = [
      ['direction', 'inbound'],
      ['uuid', this.uuid],
      ['sip_call_id', sip.callId],
      ['sip_user_agent', sip.userAgent],
      ['sip_from_user', sip.fromUser],
      ['sip_to_user', sip.toUser],
      ['sip_h_X-esl-outbound', sip.eslOutbound],
    ];
    for (const [k, v] of vars) this.variables.set(k, v);
    this.setMedia(sip.remoteSdp);
  }

  /**
   * The media variables from the endpoint as negotiated: at the INVITE, and again after a re-INVITE
   * (`remoteSdp` its offer), as sofia's media renegotiation updates them (fsmrf's modify reads them back).
   */
  setMedia(remoteSdp: string | null): void {
    const media = this.endpoint.remote.media;
    const vars: [string, string][] = [
      ['rtp_local_sdp_str', this.endpoint.local.sdp],
      ['local_media_ip', this.endpoint.local.address],
      ['local_media_port', String(this.endpoint.local.port)],
      ['dtmf_type', media?.dtmfPayloadType != null ? 'rfc2833' : 'none'],
    ];
    if (remoteSdp) vars.push(['switch_r_sdp', remoteSdp]);
    if (media) vars.push(['remote_media_ip', media.remoteAddress], ['remote_media_port', String(media.remotePort)], ...codecVariables(media));
    for (const [k, v] of vars) this.variables.set(k, v);
  }

  /** The headers of the channel's state and identity every channel event carries, then its variables. */
  headers(): [string, string][] {
    const media = this.endpoint.remote.media;
    const codec = media?.codec ?? 'PCMU';
    const rate = String(media?.clockRate ?? 8000);
    const hungUp = this.callState === 'HANGUP';
    const out: [string, string][] = [
      ['Channel-State', hungUp ? 'CS_HANGUP' : 'CS_EXECUTE'],
      ['Channel-Call-State', this.callState],
      ['Channel-State-Number', hungUp ? '10' : '4'],
      ['Channel-Name', this.name],
      ['Unique-ID', this.uuid],
      ['Call-Direction', 'inbound'],
      ['Answer-State', hungUp ? 'hangup' : 'answered'],
      ['Channel-Read-Codec-Name', codec],
      ['Channel-Read-Codec-Rate', rate],
      ['Channel-Write-Codec-Name', codec],
      ['Channel-Write-Codec-Rate', rate],
    ];
    if (this.hangupCause) out.push(['Hangup-Cause', this.hangupCause]);
    for (const [k, v] of this.variables) out.push([`variable_${k}`, v]);
    return out;
  }

  /** CHANNEL_DATA, the outbound socket's answer to `connect`: the caller profile's Channel-* headers, then the channel's. */
  channelData(events: EventFactory): EslEvent {
    return events.make('CHANNEL_DATA', SITE, [
      ['Channel-Direction', 'inbound'],
      ['Channel-Username', this.sip.fromUser],
      ['Channel-Dialplan', 'XML'],
      ['Channel-Caller-ID-Number', this.sip.fromUser],
      ['Channel-Destination-Number', this.sip.toUser],
      ['Channel-Unique-ID', this.uuid],
      ['Channel-Source', 'mod_sofia'],
      ['Channel-Channel-Name', this.name],
      ...this.headers(),
    ]);
  }

  /** A channel event (CHANNEL_HANGUP, CHANNEL_EXECUTE_COMPLETE, a CUSTOM subclass, …) with the channel's headers and its own. */
  event(events: EventFactory, name: EventName, own: [string, string][] = [], opts: { subclass?: string; body?: string } = {}): EslEvent {
    return events.make(name, SITE, [...this.headers(), ...own], opts);
  }
}

const SITE = { file: 'esl/channel.ts', func: 'Channel' };

/**
 * The codec variables FreeSWITCH sets once media is negotiated (switch_core_codec.c: read_/write_codec
 * and _rate, original_read_*; switch_core_media.c: rtp_use_codec_*, rtp_use_pt and
 * rtp_last_audio_codec_string `<name>@<rate>h@<ptime>i@<channels>c`). The rate is the codec's sample
 * rate, as FreeSWITCH's implementations report it: G.722 16000 though its RTP clock is 8000.
 */
export function codecVariables(media: NegotiatedMedia): [string, string][] {
  const rate = String(media.codec === 'G722' ? 16000 : media.clockRate);
  const rtpRate = String(media.clockRate);
  // the rtpmap's channel count: opus/48000/2
  const ch = media.codec === 'opus' ? '2' : '1';
  return [
    ['read_codec', media.codec],
    ['read_rate', rate],
    ['original_read_codec', media.codec],
    ['original_read_rate', rate],
    ['write_codec', media.codec],
    ['write_rate', rate],
    ['rtp_use_codec_name', media.codec],
    ['rtp_use_codec_rate', rtpRate],
    ['rtp_use_codec_ptime', String(media.ptime)],
    ['rtp_use_codec_channels', ch],
    ['rtp_use_pt', String(media.payloadType)],
    ['rtp_last_audio_codec_string', `${media.codec}@${rtpRate}h@${media.ptime}i@${ch}c`],
  ];
}
