// Pieces of the DTMF tests (test/edge/dtmf*.test.ts): sipp phones that send digits as RFC 4733 (sipp's
// shipped pcap) and as SIP INFO, a callee phone whose media goes to an RTP capture of the test, and
// that capture, which reads telephone-event packets as they arrive on the wire.
import dgram from 'node:dgram';
import { register } from '../../testkit/media-app/harness';
import { ack, bye, inviteWithDigest, ok200 } from '../../testkit/media-app/sipp-steps';
import { decodeG711, encodeG711 } from '../../core/audio/g711';
import { DtmfDetector } from '../../media-engine/dsp/dtmf-detector';
import { dtmfTones, renderSource } from '../../media-engine/dsp/tones';
import { rtpPcap, type PcapRtp } from '../../testkit/rtp-pcap';

export const SIPP_DIR = '/usr/share/sip-tester';

/** One RTP packet as it arrived. */
export interface Captured {
  pt: number;
  marker: boolean;
  seq: number;
  ts: number;
  ssrc: number;
  payload: Buffer;
}

/** A telephone-event packet (RFC 4733 §2.3). */
export interface EventPacket extends Captured {
  event: number;
  end: boolean;
  volume: number;
  duration: number;
}

/** A party's RTP port that only listens: everything the platform sends it is kept. */
export class RtpCapture {
  private readonly sock = dgram.createSocket('udp4');
  port = 0;
  readonly packets: Captured[] = [];

  static async open(): Promise<RtpCapture> {
    const c = new RtpCapture();
    await new Promise<void>((r) => c.sock.bind(0, '127.0.0.1', r));
    c.port = c.sock.address().port;
    c.sock.on('message', (b) => {
      if (b.length < 12 || (b[0]! & 0xc0) !== 0x80) return;
      const cc = b[0]! & 0x0f;
      c.packets.push({ pt: b[1]! & 0x7f, marker: (b[1]! & 0x80) !== 0, seq: b.readUInt16BE(2), ts: b.readUInt32BE(4), ssrc: b.readUInt32BE(8), payload: Buffer.from(b.subarray(12 + cc * 4)) });
    });
    return c;
  }

  /** The telephone-event packets of payload type `pt`, in arrival order. */
  events(pt: number): EventPacket[] {
    return this.packets
      .filter((p) => p.pt === pt && p.payload.length >= 4)
      .map((p) => ({ ...p, event: p.payload[0]!, end: (p.payload[1]! & 0x80) !== 0, volume: p.payload[1]! & 0x3f, duration: p.payload.readUInt16BE(2) }));
  }

  close(): void {
    this.sock.close();
  }
}

/** The events of `pt` grouped by their RTP timestamp (one group per digit sent). */
export function eventGroups(c: RtpCapture, pt: number): EventPacket[][] {
  const groups = new Map<number, EventPacket[]>();
  for (const e of c.events(pt)) {
    const g = groups.get(e.ts) ?? [];
    g.push(e);
    groups.set(e.ts, g);
  }
  return [...groups.values()];
}

/** An in-dialog INFO from a phone that placed the call (after its 200 with rrs="true"). */
export function infoStep(cseq: number, contentType: string | null, body: string, expectStatus: number): string {
  return `<send retrans="500"><![CDATA[
INFO [next_url] SIP/2.0
Via: SIP/2.0/[transport] [local_ip]:[local_port];branch=[branch]
[last_From:]
[last_To:]
[routes]
Call-ID: [call_id]
CSeq: ${cseq} INFO
Max-Forwards: 70
${contentType ? `Content-Type: ${contentType}\n` : ''}Content-Length: [len]

${body}
]]></send>
<recv response="${expectStatus}"/>`;
}

/**
 * sipp's body ends each line with CRLF and adds one after the last: a body given here is its lines.
 * A phone (digest, REGISTER first) that calls `target` offering PCMU and telephone-event 101 on
 * sipp's media port, then runs `steps` and hangs up.
 */
export function dtmfCaller(user: string, domain: string, target: string, steps: string, firstCseq = 1): string {
  const sdp = `v=0
o=- 1 1 IN IP4 [local_ip]
s=-
c=IN IP4 [local_ip]
t=0 0
m=audio [media_port] RTP/AVP 0 101
a=rtpmap:0 PCMU/8000
a=rtpmap:101 telephone-event/8000
a=fmtp:101 0-15`;
  return `<?xml version="1.0" encoding="ISO-8859-1" ?>
<scenario name="dtmf-caller">
${register(user, domain)}
${inviteWithDigest({ user, domain, target, display: 'Desk', sdp, firstCseq })}
<recv response="180" optional="true"/>
<recv response="200" rrs="true"/>
${ack(firstCseq + 1)}
${steps}
${bye(20)}
</scenario>`;
}

/** Scenario step: sipp plays one of its shipped RFC 2833 pcaps (telephone-event 101) from its media port. */
export const playDigitPcap = (name: string, thenPauseMs = 1500) => `<nop><action><exec play_pcap_audio="${SIPP_DIR}/${name}"/></action></nop>\n<pause milliseconds="${thenPauseMs}"/>`;

/**
 * A registered phone answering one call (run after registerOnly on its port), its media going to
 * `rtpPort` (a capture). With `telephoneEventPt` its SDP offers telephone-event on that payload type.
 * `inCall` are steps while the call is up (e.g. the INFOs it expects), before the platform's BYE.
 * With `slowInfoMs` it then answers every INFO (any number) that long after it arrives, until the BYE.
 */
export function dtmfCallee(user: string, rtpPort: number, o: { telephoneEventPt?: number; inCall?: string; slowInfoMs?: number } = {}): string {
  const pt = o.telephoneEventPt;
  const sdp = `v=0
o=- 1 1 IN IP4 127.0.0.1
s=-
c=IN IP4 127.0.0.1
t=0 0
m=audio ${rtpPort} RTP/AVP 0${pt !== undefined ? ` ${pt}` : ''}
a=rtpmap:0 PCMU/8000${pt !== undefined ? `\na=rtpmap:${pt} telephone-event/8000\na=fmtp:${pt} 0-16` : ''}`;
  const reply = (status: string, extra: string) => `SIP/2.0 ${status}
[last_Via:]
[last_From:]
[last_To:];tag=[pid]callee
[last_Call-ID:]
[last_CSeq:]
Contact: <sip:${user}@[local_ip]:[local_port]>
${extra}`;
  return `<?xml version="1.0" encoding="ISO-8859-1" ?>
<scenario name="dtmf-callee">
<recv request="INVITE" timeout="20000"/>
<send><![CDATA[
${reply('180 Ringing', 'Content-Length: 0\n')}
]]></send>
<send retrans="500"><![CDATA[
${reply('200 OK', `Content-Type: application/sdp\nContent-Length: [len]\n\n${sdp}`)}
]]></send>
<recv request="ACK"/>
${o.inCall ?? ''}
${
  o.slowInfoMs === undefined
    ? '<recv request="BYE" timeout="30000"/>'
    : `<label id="1"/>
<recv request="INFO" optional="true" next="2"/>
<recv request="BYE" timeout="30000" next="3"/>
<label id="2"/>
<pause milliseconds="${o.slowInfoMs}"/>
${ok200.replace('<send>', '<send next="1">')}
<label id="3"/>`
}
${ok200}
</scenario>`;
}

/** Callee step: an INFO arrives whose body matches `bodyRegexp` (sipp checks it), answered 200. */
export function expectInfo(bodyRegexp: string, n: number): string {
  return `<recv request="INFO" timeout="15000"><action>
<ereg regexp="application/dtmf-relay" search_in="hdr" header="Content-Type:" check_it="true" assign_to="ct${n}"/>
<ereg regexp="${bodyRegexp}" search_in="body" check_it="true" assign_to="b${n}"/>
<log message="INFO ${n} [$ct${n}] [$b${n}]"/>
</action></recv>
${ok200}`;
}

/** The DTMF suites' pcaps: their own SSRC, ports 6000 → 6002 recorded. */
const DTMF_PCAP = { ssrc: 0x5eed0001 } as const;

/**
 * A pcap of PCMU audio carrying in-band DTMF tones for `digits`, for sipp's play_pcap_audio: 500 ms
 * of silence first, each digit `onMs` long, 20 ms packets.
 */
export function inbandDtmfPcap(digits: string, onMs = 200): Buffer {
  const pcm = renderSource(dtmfTones(`,${digits}`, { onMs, offMs: 200, amplitude: 7000 }));
  const frames = Math.floor(pcm.length / 160);
  const rtps: PcapRtp[] = [];
  for (let i = 0; i < frames; i++) {
    rtps.push({ pt: 0, marker: i === 0, seq: 1000 + i, ts: 8000 + i * 160, payload: encodeG711('PCMU', pcm.subarray(i * 160, (i + 1) * 160)), atUs: i * 20_000 });
  }
  return rtpPcap(rtps, DTMF_PCAP);
}

/**
 * A pcap of `count` RFC 4733 digits on payload type 101, each a single end packet of its own
 * timestamp `samples` long, one every `everyUs`: a caller keying far faster than digits can be played.
 */
export function telephoneEventFloodPcap(count: number, samples: number, everyUs: number): Buffer {
  const rtps: PcapRtp[] = [];
  for (let i = 0; i < count; i++) {
    const payload = new Uint8Array([i % 10, 0x80 | 10, (samples >> 8) & 0xff, samples & 0xff]);
    rtps.push({ pt: 101, marker: true, seq: 2000 + i, ts: 16000 + i * samples, payload, atUs: i * everyUs });
  }
  return rtpPcap(rtps, DTMF_PCAP);
}

/** The keys in-band in the PCMU packets a capture got (decoded in arrival order, the engine's own detector). */
export function inbandKeys(c: RtpCapture): string {
  const det = new DtmfDetector();
  let keys = '';
  const frame = new Int16Array(160);
  for (const p of c.packets) {
    if (p.pt !== 0 || p.payload.length !== 160) continue;
    decodeG711('PCMU', p.payload, frame);
    const d = det.process(frame);
    if (d) keys += d.digit;
  }
  return keys;
}
