// Shared pieces of the groupcall and transfer tests: the platform plus a control-api on the same
// Redis prefix and database, sipp scenarios for the parties, and an RTP party that speaks (a tone).
import dgram from 'node:dgram';
import request from 'supertest';
import { buildTestApp, createFixture, type Fixture, type TestApp } from '../../testkit/api';
import { expect } from 'chai';
import { killAllSipp, register, SIPP_SDP, startPlatform, until, type Platform, type SippResult } from '../../testkit/media-app/harness';
import { ack, ackFailure, bye, inviteWithDigest, ok200 } from '../../testkit/media-app/sipp-steps';
import { loopbackSdp } from '../../testkit/sdp';
import { muLaw } from '../../core/audio/g711';
import { closeCommandBus } from '../../control-api/calls/bus';

export interface Stack {
  p: Platform;
  t: TestApp;
  f: Fixture;
  api: { post(path: string, body: unknown): request.Test; get(path: string): request.Test };
  close(): Promise<void>;
}

/**
 * `env` goes to both processes (e.g. EGRESS_ALLOW_CIDRS for parties on loopback); `log` gets the platform's
 * log lines; `mediaServer`: media-app's backend (startPlatform's, the embedded engine by default).
 */
export async function startStack(env: Record<string, string> = {}, opts: { log?: NodeJS.WritableStream; mediaServer?: 'embedded' | 'fsmrf' } = {}): Promise<Stack> {
  // sipp answers only MD5 challenges: offer MD5 first
  const p = await startPlatform({ SIP_DIGEST_ALGORITHMS: 'MD5,SHA-256', ...env }, { log: opts.log, mediaServer: opts.mediaServer });
  const t = await buildTestApp({ env: { RATE_LIMIT_SCALE: '0', REDIS_KEY_PREFIX: p.config.redisKeyPrefix, ...env } });
  const f = await createFixture(t.ctx);
  const auth = `Bearer ${f.token}`;
  return {
    p,
    t,
    f,
    api: {
      post: (path, body) => {
        const r = request(t.app).post(`/v1.0${path}`).set('Authorization', auth);
        return body === undefined ? r : r.send(body as object);
      },
      get: (path) => request(t.app).get(`/v1.0${path}`).set('Authorization', auth),
    },
    async close() {
      await t.close();
      await p.close();
    },
  };
}

/** SDP of a party whose audio goes to `port` on loopback. */
const sdpTo = (port: number) => loopbackSdp(port, { direction: null });

const reply = (status: string, extra: string) => `SIP/2.0 ${status}
[last_Via:]
[last_From:]
[last_To:];tag=[pid]SIPpTag01[call_number]
[last_Call-ID:]
[last_CSeq:]
${extra}`;

/**
 * The answering phone's REFER in its dialog (From/To from the INVITE, which party() keeps when it
 * will refer); `referHeaders` are the Refer-To/Referred-By lines, each ending in a newline.
 */
export const referRequest = (cseq: number, referHeaders: string) => `<send retrans="500"><![CDATA[
REFER [next_url] SIP/2.0
Via: SIP/2.0/[transport] [local_ip]:[local_port];branch=[branch]
From: [$local_to];tag=[pid]SIPpTag01[call_number]
To: [$remote_from]
[routes]
Call-ID: [call_id]
CSeq: ${cseq} REFER
Contact: <sip:phone@[local_ip]:[local_port]>
${referHeaders}Max-Forwards: 70
Content-Length: 0

]]></send>`;

/**
 * A phone that answers (its RTP going to rtpPort), and then either waits for the platform's BYE or,
 * with `referTo`, sends REFER in the dialog, takes the NOTIFYs (the last must carry 200, or with
 * `referFails` a failure) and the BYE.
 */
export function party(o: { rtpPort: number; referTo?: string; referAfterMs?: number; byeTimeoutMs?: number; /** the last NOTIFY must carry a 4xx-6xx */ referFails?: boolean }): string {
  const parts = [
    '<?xml version="1.0" encoding="ISO-8859-1" ?>',
    '<scenario name="party">',
    // sipp refuses variables it never uses: the headers are kept only when a REFER will need them
    o.referTo
      ? `<recv request="INVITE" rrs="true"><action>
  <ereg regexp="&lt;.*" search_in="hdr" header="From:" assign_to="remote_from"/>
  <ereg regexp="&lt;.*" search_in="hdr" header="To:" assign_to="local_to"/>
</action></recv>`
      : '<recv request="INVITE"/>',
    `<send><![CDATA[\n${reply('180 Ringing', 'Contact: <sip:[local_ip]:[local_port]>\nContent-Length: 0\n')}\n]]></send>`,
    `<send retrans="500"><![CDATA[\n${reply('200 OK', `Contact: <sip:[local_ip]:[local_port]>\nContent-Type: application/sdp\nContent-Length: [len]\n\n${sdpTo(o.rtpPort)}`)}\n]]></send>`,
    '<recv request="ACK"/>',
  ];
  if (o.referTo) {
    parts.push(
      `<pause milliseconds="${o.referAfterMs ?? 800}"/>`,
      referRequest(101, `Refer-To: <${o.referTo}>\nReferred-By: <sip:phone@[local_ip]:[local_port]>\n`),
      '<recv response="202"/>',
      '<recv request="NOTIFY"/>',
      ok200,
      `<recv request="NOTIFY" timeout="15000"><action><ereg regexp="SIP/2.0 ${o.referFails ? '[4-6][0-9][0-9]' : '200'}" search_in="body" check_it="true" assign_to="frag"/><log message="sipfrag [$frag]"/></action></recv>`,
      ok200,
    );
  }
  parts.push(`<recv request="BYE" timeout="${o.byeTimeoutMs ?? 30000}"/>`, ok200, '</scenario>');
  return parts.join('\n');
}

/** A UAS that rings and then takes the caller's CANCEL (200, 487, ACK). */
export function cancelledUas(): string {
  return `<?xml version="1.0" encoding="ISO-8859-1" ?>
<scenario name="cancelled">
<recv request="INVITE"/>
<send><![CDATA[\n${reply('180 Ringing', 'Content-Length: 0\n')}\n]]></send>
<recv request="CANCEL" timeout="20000"/>
${ok200}
<send><![CDATA[
SIP/2.0 487 Request Terminated
[last_Via:]
[last_From:]
[last_To:];tag=[pid]SIPpTag01[call_number]
[last_Call-ID:]
CSeq: [cseq] INVITE
Content-Length: 0

]]></send>
<recv request="ACK"/>
</scenario>`;
}

/** The SSRC every TonePeer sends under: a packet carrying it came from a TonePeer, never from the platform. */
const TONE_SSRC = 0x1234abcd;

/** Frames a TonePeer sends at once to catch up after its loop was busy (200 ms). */
const MAX_BURST = 10;

/**
 * An RTP party that speaks: it answers its leg (the platform's RTP port for this party) every 20 ms with
 * a loud 1 kHz tone (PCMU), so whoever is bridged to it hears energy. It also listens: `voiced` counts the
 * PCMU packets from its leg whose level says speech (another TonePeer's tone, through the platform).
 *
 * Its leg is the port `talkTo` names (a test that knows its call's endpoint), else the sender of the first
 * packet that is not another TonePeer's. Not just the first packet: its port is an ephemeral one the
 * kernel may hand out again while an earlier test's TonePeer still aims its tone at it (they close with
 * their suite), and answering that one leaves the leg unheard (bridge.test.ts, CI: "C hears A").
 */
export class TonePeer {
  private sock = dgram.createSocket('udp4');
  private timer: NodeJS.Timeout | null = null;
  /** the leg's RTP port on loopback, once known */
  private leg: number | null = null;
  port = 0;
  received = 0;
  voiced = 0;
  /** while true it sends nothing (a phone held with recvonly), its clock going on */
  silent = false;

  static async open(): Promise<TonePeer> {
    const t = new TonePeer();
    t.sock.on('error', () => undefined); // a send to a leg gone (ICMP) is not this party's failure
    await new Promise<void>((r) => t.sock.bind(0, '127.0.0.1', r));
    t.port = t.sock.address().port;
    t.sock.on('message', (buf, rinfo) => {
      if (rinfo.address !== '127.0.0.1' || buf.length < 12) return;
      if (t.leg === null) {
        if (buf.readUInt32BE(8) === TONE_SSRC) return; // another TonePeer's tone, not the platform
        t.talkTo(rinfo.port);
      }
      if (rinfo.port !== t.leg) return;
      t.received++;
      if (buf.length > 12 && (buf[1]! & 0x7f) === 0) {
        let sum = 0;
        for (const b of buf.subarray(12)) sum += Math.abs(muLaw.decodeSample(b));
        if (sum / (buf.length - 12) > 300) t.voiced++;
      }
    });
    return t;
  }

  /** Its leg is the platform's RTP port `port` (on loopback): it speaks to it, and hears only it. */
  talkTo(port: number): void {
    this.leg = port;
    if (this.timer) return;
    const payload = Buffer.alloc(160);
    for (let i = 0; i < 160; i++) payload[i] = muLaw.encodeSample(Math.round(9000 * Math.sin((2 * Math.PI * 1000 * i) / 8000)));
    let seq = 1;
    let ts = 0;
    // by the wall clock, as conference/party.ts: each tick sends every frame due since the start (at
    // most MAX_BURST at once), so a test process slowed by a busy machine still sends 50 a second
    const start = performance.now();
    let sent = 0;
    this.timer = setInterval(() => {
      const due = Math.floor((performance.now() - start) / 20) + 1;
      if (due - sent > MAX_BURST) sent = due - MAX_BURST;
      for (; sent < due; sent++) {
        const h = Buffer.alloc(12);
        h[0] = 0x80;
        h[1] = 0;
        h.writeUInt16BE(seq++ & 0xffff, 2);
        h.writeUInt32BE(ts >>> 0, 4);
        ts += 160;
        h.writeUInt32BE(TONE_SSRC, 8);
        if (!this.silent && this.leg !== null) this.sock.send(Buffer.concat([h, payload]), this.leg, '127.0.0.1');
      }
    }, 20);
  }

  close(): void {
    if (this.timer) clearInterval(this.timer);
    this.sock.close();
  }
}

export { registerOnly } from '../../testkit/media-app/harness';

/** A registered phone calls `number`; it hangs up after 800 ms, or with waitForBye takes the platform's BYE. */
export function phoneCalls(user: string, domain: string, number: string, o: { waitForBye?: boolean } = {}): string {
  return `<?xml version="1.0" encoding="ISO-8859-1" ?>
<scenario name="ext-to-tel">
${register(user, domain)}
${inviteWithDigest({ user, domain, target: number, display: 'Desk', sdp: SIPP_SDP, firstCseq: 1, ackVia: 'new' })}
<recv response="180" optional="true"/>
<recv response="200" rrs="true"/>
${ack(2)}
${
  o.waitForBye
    ? `<recv request="BYE" timeout="30000"/>\n${ok200}`
    : `<pause milliseconds="800"/>
${bye(3)}
`
}
</scenario>`;
}

/** A registered phone calls `number` and is refused with `status` before any ringing (it ACKs). */
export function phoneCallRefused(user: string, domain: string, number: string, status: number): string {
  const full = phoneCalls(user, domain, number);
  const cut = full.indexOf('<recv response="100" optional="true"/>\n<recv response="180"');
  return `${full.slice(0, cut)}<recv response="100" optional="true"/>\n<recv response="${status}"/>\n${ackFailure(`sip:${number}@${domain}`, 2, 'new')}\n</scenario>`;
}

/**
 * After a party's REFER was refused: waits for the transfer the REFER created to fail, hangs the call
 * up, and checks that the refusing party `a` ran its scenario to the end (NOTIFYs and BYE).
 */
export async function referFailsThenHangUp(s: Stack, callId: string, transfererLegId: string, a: { done: Promise<SippResult> }, others: { done: Promise<SippResult> }[]): Promise<void> {
  const t = await until(
    async () => {
      const r = await s.t.ctx.db('transfers').where({ transferer_call_id: transfererLegId }).first();
      return r && r.status === 'failed' ? r : null;
    },
    30_000,
    'the REFER’s transfer failed',
  );
  expect(t.source).to.equal('refer');
  await s.api.post(`/calls/${callId}/hangup`, undefined);
  const [ra] = await Promise.all([a.done, ...others.map((o) => o.done)]);
  expect(ra!.code, ra!.errors + ra!.messages.slice(-3000)).to.equal(0);
}

/**
 * Mocha hooks: the stack (egress allowed to loopback, `env` over it, media-app on `mediaServer`) for the
 * suite; after it every sipp killed, each `open` thing closed, control-api's command bus and the stack closed.
 */
export function useXferStack(set: (s: Stack) => void, env: Record<string, string> = {}, opts: { mediaServer?: 'embedded' | 'fsmrf' } = {}): { close(): void }[] {
  let s: Stack | undefined;
  const open: { close(): void }[] = [];
  before(async () => {
    s = await startStack({ EGRESS_ALLOW_CIDRS: '127.0.0.0/8', ...env }, { mediaServer: opts.mediaServer });
    set(s);
  });
  after(async () => {
    killAllSipp();
    for (const o of open) o.close();
    if (s) await closeCommandBus(s.t.ctx);
    await s?.close();
  });
  return open;
}
