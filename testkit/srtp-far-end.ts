// The far end's SRTP stack for tests: a second real rtpengine (testkit/rtpengine.ts) encrypts
// and decrypts for a plain RTP party on loopback, so the platform meets real SDES-SRTP or
// DTLS-SRTP + ICE and the test reads plain audio:
//   plain RTP party ◀──RTP──▶ rtpengine #2 ◀── SDES / DTLS-SRTP + ICE ──▶ the platform
// Driven over ng with npm `rtpengine-client` directly (not media-app's client under test).
import { randomBytes } from 'node:crypto';
import { Client, type NgParams } from 'rtpengine-client';

export type FarEndProfile = 'sdes' | 'dtls';

/** A plain PCMU offer/answer for an RTP socket on 127.0.0.1. */
export function plainSdp(port: number, direction = 'sendrecv'): string {
  return [
    'v=0',
    `o=- ${Date.now()} 1 IN IP4 127.0.0.1`,
    's=-',
    'c=IN IP4 127.0.0.1',
    't=0 0',
    `m=audio ${port} RTP/AVP 0 101`,
    'a=rtpmap:0 PCMU/8000',
    'a=rtpmap:101 telephone-event/8000',
    'a=fmtp:101 0-15',
    `a=${direction}`,
    'a=ptime:20',
    '',
  ].join('\r\n');
}

/** The audio address of an SDP (c= and m=audio). */
export function audioAddress(sdp: string): { host: string; port: number } {
  const host = /^c=IN IP4 (\S+)/m.exec(sdp)?.[1];
  const port = Number(/^m=audio (\d+)/m.exec(sdp)?.[1]);
  if (!host || !port) throw new Error(`no audio address in SDP:\n${sdp}`);
  return { host, port };
}

const towardsPlatform = (p: FarEndProfile): NgParams =>
  p === 'sdes' ? { 'transport-protocol': 'RTP/SAVP', ICE: 'remove', DTLS: 'off' } : { 'transport-protocol': 'UDP/TLS/RTP/SAVPF', ICE: 'force', SDES: ['off'], 'rtcp-mux': ['offer'] };
const towardsParty: NgParams = { 'transport-protocol': 'RTP/AVP', ICE: 'remove', DTLS: 'off', 'rtcp-mux': ['demux'] };

export class SrtpFarEnd {
  private readonly client = new Client({ localAddress: '127.0.0.1', localPort: 0, timeout: 2000 });
  readonly callId = `far-${randomBytes(6).toString('hex')}`;

  constructor(private readonly ng: { host: string; port: number }) {
    this.client.on('error', () => undefined);
  }

  private async cmd(name: 'offer' | 'answer' | 'delete', params: NgParams): Promise<string> {
    const r = await this.client[name](this.ng, { 'call-id': this.callId, ...params });
    if (r.result !== 'ok') throw new Error(`far-end rtpengine ${name}: ${r['error-reason'] ?? r.result}`);
    return r.sdp ?? '';
  }

  /** Caller side: the SRTP offer for the platform (again for a re-INVITE: hold is `sendonly`), made from the party's plain SDP. */
  offer(profile: FarEndProfile, partyPort: number, direction = 'sendrecv'): Promise<string> {
    return this.cmd('offer', { 'from-tag': 'party', sdp: plainSdp(partyPort, direction), ...towardsPlatform(profile) });
  }

  /** Caller side: the platform's answer → where the party sends its plain RTP. */
  async answered(platformAnswer: string): Promise<{ host: string; port: number }> {
    return audioAddress(await this.cmd('answer', { 'from-tag': 'party', 'to-tag': 'platform', sdp: platformAnswer }));
  }

  /** Callee side: the platform's SRTP offer → the SRTP answer for it, and where the party sends. */
  async answerOffer(platformOffer: string, partyPort: number): Promise<{ sdp: string; rtp: { host: string; port: number } }> {
    const toParty = await this.cmd('offer', { 'from-tag': 'platform', sdp: platformOffer, ...towardsParty });
    const sdp = await this.cmd('answer', { 'from-tag': 'platform', 'to-tag': 'party', sdp: plainSdp(partyPort) });
    return { sdp, rtp: audioAddress(toParty) };
  }

  async close(): Promise<void> {
    await this.cmd('delete', {}).catch(() => undefined);
    this.client.close();
  }
}
