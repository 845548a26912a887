/**
 * SDP (RFC 4566) for one audio stream, and offer/answer (RFC 3264) for PCMU, PCMA, G.722, Opus and
 * telephone-event (RFC 4733) at the chosen codec's clock (8000, or 48000 for Opus), or, when the far
 * end offers or answers it only at another clock (Debian 12's baresip: Opus with telephone-event/8000),
 * at that clock, as Asterisk and pjsip take it; with ptime and direction attributes (hold included).
 * The formats themselves are in formats.ts.
 */
import { AUDIO_CODECS, codecOf, DTMF_OFFER_PT, FORMATS, localFmtp, usableCodecs, type AudioCodecName } from './formats';

export type Direction = 'sendrecv' | 'sendonly' | 'recvonly' | 'inactive';
export type { AudioCodecName } from './formats';

export interface RtpMap {
  pt: number;
  encoding: string; // upper case
  clockRate: number;
  channels: number;
  fmtp?: string;
}

export interface AudioMedia {
  port: number;
  proto: string;
  address: string; // connection address for this media (media-level c= wins)
  formats: RtpMap[]; // in m-line preference order
  ptime?: number;
  direction: Direction;
  rtcpPort?: number;
  rtcpMux: boolean;
}

export interface SessionDescription {
  origin: { username: string; sessionId: string; version: string; address: string };
  sessionName: string;
  address: string; // session-level connection address
  audio: AudioMedia | null;
  /** the offer signals RTCP XR (RFC 3611 §5.1 `a=rtcp-xr`, session or audio level) */
  rtcpXr: boolean;
  raw: string;
}

const STATIC: Record<number, { encoding: string; clockRate: number }> = {
  0: { encoding: 'PCMU', clockRate: 8000 },
  8: { encoding: 'PCMA', clockRate: 8000 },
  9: { encoding: 'G722', clockRate: 8000 },
  18: { encoding: 'G729', clockRate: 8000 },
  3: { encoding: 'GSM', clockRate: 8000 },
};

export class SdpError extends Error {}

export function parseSdp(text: string): SessionDescription {
  if (typeof text !== 'string' || !text.trim()) throw new SdpError('empty SDP');
  const lines = text
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter(Boolean);
  if (!lines[0]?.startsWith('v=0')) throw new SdpError('SDP must start with v=0');
  let sessionAddress = '';
  let origin = { username: '-', sessionId: '0', version: '0', address: '0.0.0.0' };
  let sessionName = '-';
  let sessionDirection: Direction = 'sendrecv';
  let rtcpXr = false;
  let audio: AudioMedia | null = null;
  let inAudio = false;
  let inMedia = false;
  let audioAddress = '';
  let sawAudio = false;
  for (const line of lines) {
    const type = line[0];
    const value = line.slice(2);
    if (line[1] !== '=') throw new SdpError(`malformed SDP line: ${line}`);
    if (type === 'm') {
      inMedia = true;
      const [media, port, proto, ...fmts] = value.split(/\s+/);
      inAudio = media === 'audio' && !sawAudio;
      if (inAudio) {
        sawAudio = true;
        audio = audioOfMLine(line, port, proto, fmts, sessionDirection);
      }
      continue;
    }
    if (type === 'o') {
      const [username, sessionId, version, , , address] = value.split(/\s+/);
      origin = { username, sessionId, version, address: address ?? '0.0.0.0' };
    } else if (type === 's') sessionName = value;
    else if (type === 'c') {
      const parts = value.split(/\s+/);
      if (parts.length < 3 || parts[0] !== 'IN') throw new SdpError(`bad c= line: ${line}`);
      const addr = parts[2].split('/')[0];
      if (!inMedia) sessionAddress = addr;
      else if (inAudio) audioAddress = addr;
    } else if (type === 'a') {
      const colon = value.indexOf(':');
      const name = colon < 0 ? value : value.slice(0, colon);
      const arg = colon < 0 ? '' : value.slice(colon + 1);
      if (name === 'sendrecv' || name === 'sendonly' || name === 'recvonly' || name === 'inactive') {
        if (!inMedia) sessionDirection = name;
        else if (inAudio && audio) audio.direction = name;
        continue;
      }
      if (name === 'rtcp-xr' && (!inMedia || inAudio)) rtcpXr = true;
      if (!inAudio || !audio) continue;
      audioAttribute(audio, name, arg, line);
    }
  }
  if (audio) audio.address = audioAddress || sessionAddress;
  if (audio && !audio.address && audio.port !== 0) throw new SdpError('no connection address for audio');
  return { origin, sessionName, address: sessionAddress, audio, rtcpXr, raw: text };
}

/** The audio section an m=audio line opens (static payload types named; rtpmap lines fill the rest). */
function audioOfMLine(line: string, port: string | undefined, proto: string | undefined, fmts: string[], direction: Direction): AudioMedia {
  const p = Number(port?.split('/')[0]);
  if (!Number.isInteger(p) || p < 0 || p > 65535) throw new SdpError(`bad port in m-line: ${line}`);
  return {
    port: p,
    proto: proto ?? '',
    address: '',
    formats: fmts
      .filter((f) => /^\d+$/.test(f))
      .map((f) => {
        const pt = Number(f);
        const st = STATIC[pt];
        return { pt, encoding: st?.encoding ?? '', clockRate: st?.clockRate ?? 8000, channels: 1 };
      }),
    direction,
    rtcpMux: false,
  };
}

/** An a= line of the audio section: rtpmap, fmtp, ptime, rtcp, rtcp-mux (others are ignored). */
function audioAttribute(audio: AudioMedia, name: string, arg: string, line: string): void {
  if (name === 'rtpmap') {
    const m = /^(\d+)\s+([^/\s]+)\/(\d+)(?:\/(\d+))?/.exec(arg);
    if (!m) throw new SdpError(`bad rtpmap: ${line}`);
    const f = audio.formats.find((x) => x.pt === Number(m[1]));
    if (f) {
      f.encoding = m[2].toUpperCase();
      f.clockRate = Number(m[3]);
      f.channels = m[4] ? Number(m[4]) : 1;
    }
  } else if (name === 'fmtp') {
    const m = /^(\d+)\s+(.*)$/.exec(arg);
    const f = m && audio.formats.find((x) => x.pt === Number(m[1]));
    if (f) f.fmtp = m![2];
  } else if (name === 'ptime') {
    const n = Number(arg);
    if (n > 0) audio.ptime = n;
  } else if (name === 'rtcp') {
    const n = Number(arg.split(/\s+/)[0]);
    if (n > 0) audio.rtcpPort = n;
  } else if (name === 'rtcp-mux') audio.rtcpMux = true;
}

export interface LocalMediaOptions {
  address: string;
  port: number;
  codecs?: AudioCodecName[]; // preference order
  dtmfPayloadType?: number;
  ptime?: number;
  direction?: Direction;
  sessionId?: string;
  version?: number;
}

/** What both sides agreed on for the audio stream. */
export interface NegotiatedMedia {
  codec: AudioCodecName;
  payloadType: number;
  /** the codec's RTP clock (8000; 48000 for Opus) */
  clockRate: number;
  /** the far end's fmtp for the codec (Opus: what it wants to receive), '' when none */
  fmtp: string;
  /** telephone-event's payload type, null when not negotiated */
  dtmfPayloadType: number | null;
  /** telephone-event's clock: clockRate, or the one the far end gave when it gave none at clockRate (event durations count on it) */
  dtmfClockRate: number;
  remoteAddress: string;
  remotePort: number;
  remoteRtcpPort: number;
  ptime: number;
  /** our own direction attribute */
  direction: Direction;
  /** false while the far end holds us (we must not send) */
  send: boolean;
  receive: boolean;
}

/** One format line of an SDP we write. */
export interface SdpFormat {
  pt: number;
  encoding: string;
  clockRate: number;
  channels?: 1 | 2;
  fmtp?: string;
}

function codecFormat(codec: AudioCodecName, pt: number): SdpFormat {
  const f = FORMATS[codec];
  return { pt, encoding: f.encoding, clockRate: f.clockRate, channels: f.rtpmapChannels, fmtp: localFmtp(codec) };
}

function dtmfFormat(pt: number, clockRate: number, fmtp?: string): SdpFormat {
  return { pt, encoding: 'telephone-event', clockRate, fmtp: fmtp ?? '0-16' };
}

/** The codecs a leg negotiates when it is given none: all of them, G.711 first. */
export const DEFAULT_CODECS: readonly AudioCodecName[] = AUDIO_CODECS;

/** What we ask for in RTCP XR (RFC 3611 §5.1) when the offer signals XR: the VoIP metrics block, which the engine reads for call quality. */
export const RTCP_XR_ANSWER = 'rtcp-xr:voip-metrics';

export function generateSdp(o: { address: string; port: number; formats: SdpFormat[]; ptime: number; direction: Direction; sessionId: string; version: number; rtcpXr?: boolean }): string {
  const lines = ['v=0', `o=- ${o.sessionId} ${o.version} IN IP4 ${o.address}`, 's=media-engine', `c=IN IP4 ${o.address}`, 't=0 0', `m=audio ${o.port} RTP/AVP ${o.formats.map((f) => f.pt).join(' ')}`];
  for (const f of o.formats) {
    lines.push(`a=rtpmap:${f.pt} ${f.encoding}/${f.clockRate}${f.channels === 2 ? '/2' : ''}`);
    if (f.fmtp) lines.push(`a=fmtp:${f.pt} ${f.fmtp}`);
  }
  lines.push(`a=ptime:${o.ptime}`, `a=${o.direction}`);
  if (o.rtcpXr) lines.push(`a=${RTCP_XR_ANSWER}`);
  return lines.join('\r\n') + '\r\n';
}

/** Our offer: the usable codecs of `local.codecs` in that order, then telephone-event at each clock offered. */
export function createOffer(local: LocalMediaOptions): string {
  const codecs = usableCodecs(local.codecs ?? DEFAULT_CODECS);
  if (!codecs.length) throw new SdpError(`none of the codecs ${(local.codecs ?? []).join(', ')} can run here`);
  const formats = codecs.map((c) => codecFormat(c, FORMATS[c].offerPt));
  if (codecs.some((c) => FORMATS[c].clockRate === 8000)) formats.push(dtmfFormat(local.dtmfPayloadType ?? DTMF_OFFER_PT[8000], 8000));
  if (codecs.includes('opus')) formats.push(dtmfFormat(DTMF_OFFER_PT[48000], 48000));
  return generateSdp({
    address: local.address,
    port: local.port,
    formats,
    ptime: local.ptime ?? 20,
    direction: local.direction ?? 'sendrecv',
    sessionId: local.sessionId ?? String(Date.now()),
    version: local.version ?? 1,
  });
}

function answerDirection(remote: Direction, wanted: Direction): Direction {
  const canSend = wanted === 'sendrecv' || wanted === 'sendonly';
  const canRecv = wanted === 'sendrecv' || wanted === 'recvonly';
  const send = canSend && (remote === 'sendrecv' || remote === 'recvonly');
  const recv = canRecv && (remote === 'sendrecv' || remote === 'sendonly');
  return send && recv ? 'sendrecv' : send ? 'sendonly' : recv ? 'recvonly' : 'inactive';
}

function isHoldAddress(a: string): boolean {
  return a === '0.0.0.0';
}

function pickFormats(remote: AudioMedia, prefs: readonly AudioCodecName[]): { codec: RtpMap & { name: AudioCodecName }; dtmf: RtpMap | undefined } | null {
  const usable = usableCodecs(prefs);
  // the offerer's order wins (RFC 3264 §6.1); our list only filters
  for (const f of remote.formats) {
    const name = codecOf(f.encoding, f.clockRate, f.channels);
    if (!name || !usable.includes(name)) continue;
    // telephone-event at the codec's own clock (RFC 4733 §2.1); none at that clock: at the clock the
    // far end gave (its durations rescaled, the RTP timestamps stay on the stream's clock); none at all: digits go in band
    const events = remote.formats.filter((d) => d.encoding === 'TELEPHONE-EVENT' && d.clockRate > 0);
    const dtmf = events.find((d) => d.clockRate === f.clockRate) ?? events[0];
    return { codec: { ...f, name }, dtmf };
  }
  return null;
}

function negotiated(remote: AudioMedia, codec: RtpMap & { name: AudioCodecName }, dtmf: RtpMap | undefined, direction: Direction, ptime: number): NegotiatedMedia {
  const hold = isHoldAddress(remote.address) || remote.port === 0;
  return {
    codec: codec.name,
    payloadType: codec.pt,
    clockRate: codec.clockRate,
    fmtp: codec.fmtp ?? '',
    dtmfPayloadType: dtmf ? dtmf.pt : null,
    dtmfClockRate: dtmf ? dtmf.clockRate : codec.clockRate,
    remoteAddress: remote.address,
    remotePort: remote.port,
    remoteRtcpPort: remote.rtcpPort ?? remote.port + 1,
    ptime,
    direction,
    send: !hold && (direction === 'sendrecv' || direction === 'sendonly'),
    receive: direction === 'sendrecv' || direction === 'recvonly',
  };
}

/** Answers a remote offer; throws SdpError (488 material) when nothing acceptable is offered. */
export function createAnswer(offerText: string, local: LocalMediaOptions): { sdp: string; media: NegotiatedMedia } {
  const offer = parseSdp(offerText);
  const remote = offer.audio;
  if (!remote) throw new SdpError('offer has no audio stream');
  if (!/^RTP\/AVP$/i.test(remote.proto)) throw new SdpError(`unsupported transport ${remote.proto}`);
  const picked = pickFormats(remote, local.codecs ?? DEFAULT_CODECS);
  if (!picked) throw new SdpError(`no common codec in offer (we take ${usableCodecs(local.codecs ?? DEFAULT_CODECS).join(', ')})`);
  const { codec, dtmf } = picked;
  const ptime = remote.ptime ?? local.ptime ?? 20;
  let remoteDir: Direction = remote.direction;
  if (isHoldAddress(remote.address) && remoteDir === 'sendrecv') remoteDir = 'sendonly'; // RFC 2543 hold
  const direction = answerDirection(remoteDir, local.direction ?? 'sendrecv');
  const formats: SdpFormat[] = [codecFormat(codec.name, codec.pt)];
  if (dtmf) formats.push(dtmfFormat(dtmf.pt, dtmf.clockRate, dtmf.fmtp));
  const sdp = generateSdp({
    address: local.address,
    port: local.port,
    formats,
    ptime,
    direction,
    sessionId: local.sessionId ?? String(Date.now()),
    version: local.version ?? 1,
    // a phone that offers XR (liblinphone) sends it only if the answer asks for it
    rtcpXr: offer.rtcpXr,
  });
  return { sdp, media: negotiated(remote, codec, dtmf, direction, ptime) };
}

/** Applies the answer to an offer we made. */
export function applyAnswer(answerText: string, local: LocalMediaOptions): NegotiatedMedia {
  const ans = parseSdp(answerText);
  const remote = ans.audio;
  if (!remote) throw new SdpError('answer has no audio stream');
  const picked = pickFormats(remote, local.codecs ?? DEFAULT_CODECS);
  if (!picked) throw new SdpError('answer has no codec we offered');
  const { codec, dtmf } = picked;
  let remoteDir: Direction = remote.direction;
  if (isHoldAddress(remote.address) && remoteDir === 'sendrecv') remoteDir = 'sendonly';
  const direction = answerDirection(remoteDir, local.direction ?? 'sendrecv');
  return negotiated(remote, codec, dtmf, direction, remote.ptime ?? local.ptime ?? 20);
}
