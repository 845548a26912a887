// Music on hold for the held party (issue 52), with real phones on loopback (sipp, each phone's audio a
// tone of its own: testkit/conference/party.ts). A calls B's extension; A's phone puts the call on
// hold (re-INVITE a=sendonly): B hears the music on hold, not silence and not A; A's re-INVITE
// a=sendrecv takes it off hold: B hears A again, the music stopped. The API's hold of a party plays it
// the music too; a customer's own music (metadata `moh_url`, fetched through the egress policy) takes
// the place of the node's; a hold asked with `music: ""` stays silent. A flow's connect chooses the
// music of the bridge it opens (`hold_music`): its URL over the customer's, its 'none' (no music: the
// held party hears what the holder's phone sends), the API's own music still first.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import request from 'supertest';
import { toneIn } from '../../testkit/conference/party';
import { killAllSipp, register, sleep, until } from '../../testkit/media-app/harness';
import { grows, silentFor } from '../../testkit/count-waits';
import { reinvite, ack, answerReinvite, bye, inviteWithDigest } from '../../testkit/media-app/sipp-steps';
import { numbersRepo } from '../../core/repos/numbers';
import type { MediaFlags } from '../../media-app/call/media-state';
import { party, startStack, type Stack } from '../xfer/support';
import { answerOn, call, callWhere, framesMatching, hears, phone, shareOf, type Phone } from './support';
import { loopbackSdp } from '../../testkit/sdp';

// none near the notes of the node's music on hold (523-1175 Hz) nor the customer's (700 Hz) nor a flow's (2200 Hz)
const [TONE_A, TONE_B, CUSTOMER_MUSIC, FLOW_MUSIC] = [400, 1600, 700, 2200];

const sdp = (port: number, version: number, direction: 'sendrecv' | 'sendonly') => loopbackSdp(port, { version, direction });

/** A's re-INVITE in its dialog (CSeq `cseq`) with its audio at `port` in `direction`, the 200 and the ACK. */
const reinviteA = (cseq: number, port: number, direction: 'sendrecv' | 'sendonly') => reinvite(cseq, sdp(port, cseq, direction));

/** A calls `target`, holds after `holdAfterMs`, resumes `holdMs` later and hangs up `talkMs` after that. */
function holdingCaller(o: { user: string; domain: string; target: string; rtpPort: number; holdAfterMs: number; holdMs: number; talkMs: number }): string {
  return `<?xml version="1.0" encoding="ISO-8859-1" ?>
<scenario name="holding caller">
${register(o.user, o.domain)}
${inviteWithDigest({ user: o.user, domain: o.domain, target: o.target, display: 'Desk', sdp: sdp(o.rtpPort, 1, 'sendrecv'), firstCseq: 1, ackVia: 'new' })}
<recv response="180" optional="true"/>
<recv response="183" optional="true"/>
<recv response="200" rrs="true" timeout="30000"/>
${ack(2)}
<pause milliseconds="${o.holdAfterMs}"/>
${reinviteA(3, o.rtpPort, 'sendonly')}
<pause milliseconds="${o.holdMs}"/>
${reinviteA(4, o.rtpPort, 'sendrecv')}
<pause milliseconds="${o.talkMs}"/>
${bye(5)}
</scenario>`;
}

function loud(pcm: Int16Array): boolean {
  let abs = 0;
  for (const v of pcm) abs += Math.abs(v);
  return abs / pcm.length > 200;
}

/** The loud frames `p` has heard that carry none of `tones`, counted as they come (for count-waits). */
const loudFrames = (p: Phone, tones: number[]) => framesMatching(p.audio, (pcm) => loud(pcm) && !tones.some((f) => toneIn(pcm, 0, pcm.length, f)));

/** The notes of the node's music on hold (media-app/kit/moh-source.ts; the hold's check below sees them). */
const MOH_NOTES = [523.25, 659.25, 698.46, 783.99, 880, 987.77, 1046.5, 1174.66];

/**
 * The frames `p` has heard that carry a note of the node's music, alone or under another sound (a frame
 * of A's tone alone puts about 2 % of its energy in the nearest note's bin; a note needs 10 %), for count-waits.
 */
const musicFrames = (p: Phone) => framesMatching(p.audio, (pcm) => MOH_NOTES.some((f) => toneIn(pcm, 0, pcm.length, f)));

/** What `p` heard over the last `ms`: frames, loud frames, and loud frames carrying none of `tones`. */
function recent(p: Phone, ms: number, tones: number[]): { frames: number; loud: number; other: number } {
  const since = Date.now() - ms;
  const frames = p.audio.heard.filter((h) => h.at >= since);
  const loudOnes = frames.filter((h) => loud(h.pcm));
  return { frames: frames.length, loud: loudOnes.length, other: loudOnes.filter((h) => !tones.some((f) => toneIn(h.pcm, 0, h.pcm.length, f))).length };
}

/**
 * The last `n` frames `p` heard: how many, loud, and loud carrying none of `tones`. By count, not by when
 * they were read: after a stall of this process the packets that came meanwhile are read after the timer
 * that ends a wait, so a window of the last milliseconds missed them (62 frames of 75 in 1.5 s on CI).
 */
function lastFrames(p: Phone, n: number, tones: number[]): { frames: number; loud: number; other: number } {
  const frames = p.audio.heard.slice(-n);
  const loudOnes = frames.filter((h) => loud(h.pcm));
  return { frames: frames.length, loud: loudOnes.length, other: loudOnes.filter((h) => !tones.some((f) => toneIn(h.pcm, 0, h.pcm.length, f))).length };
}

describe('pbx: music on hold for the held party', function () {
  this.timeout(150_000);
  let s: Stack;
  let cid: string;
  const phones: Phone[] = [];
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'moh-'));
  const servers: http.Server[] = [];

  before(async () => {
    s = await startStack({ EGRESS_ALLOW_CIDRS: '127.0.0.0/8' });
    cid = s.f.customer.id;
  });
  after(async () => {
    killAllSipp();
    for (const p of phones) p.audio.close();
    for (const m of servers) m.close();
    await s?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  /** The media flags of a live call of this node. */
  const flagsOf = (id: string) => (s.p.app.calls.get(id) as unknown as { mediaState: { flags: MediaFlags } } | undefined)?.mediaState.flags;
  const newPhone = async (freq: number) => {
    const p = await phone(s, cid, freq);
    phones.push(p);
    return p;
  };
  const setMetadata = (body: object) => request(s.t.app).put('/v1.0/customer/metadata').set('Authorization', `Bearer ${s.f.token}`).send(body);
  /** An http URL on loopback serving 3 s of a `hz` tone as WAV. */
  const musicAt = async (hz: number): Promise<string> => {
    const wav = path.join(dir, `${hz}.wav`);
    execFileSync('sox', ['-n', '-r', '8000', '-c', '1', '-b', '16', wav, 'synth', '3', 'sine', String(hz), 'vol', '0.3']);
    const server = http.createServer((_req, res) => res.writeHead(200, { 'Content-Type': 'audio/wav' }).end(fs.readFileSync(wav)));
    servers.push(server);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    return `http://127.0.0.1:${(server.address() as { port: number }).port}/music.wav`;
  };

  it("A's phone holds (a=sendonly): B hears the music on hold, not A; A resumes (a=sendrecv): B hears A again", async () => {
    const [a, b] = [await newPhone(TONE_A), await newPhone(TONE_B)];
    const bPhone = await answerOn(b, party({ rtpPort: b.audio.port, byeTimeoutMs: 60_000 }));
    const aPhone = await call(s, a, holdingCaller({ user: a.user, domain: a.domain, target: b.extension, rtpPort: a.audio.port, holdAfterMs: 3000, holdMs: 5000, talkMs: 4000 }));
    await hears(b.audio, TONE_A, 'B hears A before the hold');
    await hears(a.audio, TONE_B, 'A hears B before the hold');
    const bRow = await callWhere(s, { customer_id: cid, direction: 'outgoing', to: b.extension }, 'progressing', 'B up');
    await until(() => flagsOf(bRow.id)?.peerHeld || null, 10_000, "A's hold reached B");
    // on hold: B hears music (loud, none of it A's tone), for most of the window
    await until(() => recent(b, 1000, [TONE_A]).other > 30 || null, 10_000, `B hears music on hold ${JSON.stringify(recent(b, 1000, [TONE_A]))}`);
    await grows(musicFrames(b), 25, 5000, 'B hears the notes of the music on hold');
    await sleep(1000);
    const held = lastFrames(b, 75, [TONE_A]);
    expect(held.other, `B hears music, not silence ${JSON.stringify(held)}`).to.be.greaterThan(50);
    expect(shareOf(b.audio, TONE_A, 1500), 'nothing of A reaches B on hold').to.be.lessThan(0.05);
    // resumed: from the moment A's re-INVITE a=sendrecv reached B's call (the music no longer wanted),
    // the music stops within what is in flight (settleMs: the stop's command to the engine, a busy
    // loop's lag), in A's place or under A, not some seconds on; then A again
    await until(() => flagsOf(bRow.id)?.peerHeld === false || null, 15_000, "A's resume reached B");
    await silentFor(musicFrames(b), 1000, 'no music after the resume', { settleMs: 500, allow: 2 });
    await hears(b.audio, TONE_A, 'B hears A after the resume', { share: 0.9, timeoutMs: 10_000 });
    const [ra, rb] = await Promise.all([aPhone.done, bPhone.done]);
    expect(ra.code, ra.errors + ra.messages.slice(-2000)).to.equal(0);
    expect(rb.code, rb.errors).to.equal(0);
  });

  it('the API holds B: B hears the customer\'s music (metadata moh_url, over http); held with music "": silence', async () => {
    const url = await musicAt(CUSTOMER_MUSIC);
    expect((await setMetadata({ moh_url: 'ftp://127.0.0.1/music.wav' })).status, 'only http(s)').to.equal(400);
    expect((await setMetadata({ moh_url: url })).status).to.equal(200);
    try {
      const [a, b] = [await newPhone(TONE_A), await newPhone(TONE_B)];
      const bPhone = await answerOn(b, heldParty(b.audio.port));
      const aPhone = await call(s, a, holdingCaller({ user: a.user, domain: a.domain, target: b.extension, rtpPort: a.audio.port, holdAfterMs: 60_000, holdMs: 0, talkMs: 0 }));
      await hears(b.audio, TONE_A, 'B hears A before the hold');
      const bRow = await callWhere(s, { customer_id: cid, direction: 'outgoing', to: b.extension }, 'progressing', 'B up');
      expect((await s.api.post(`/calls/${bRow.id}/hold`, { music: 'music.wav' })).status, 'a URL or nothing').to.equal(400);
      expect((await s.api.post(`/calls/${bRow.id}/hold`, {})).status).to.equal(200);
      await hears(b.audio, CUSTOMER_MUSIC, "B hears the customer's music on hold", { timeoutMs: 10_000 }).catch(async (e: Error) => {
        throw new Error(`${e.message} ${JSON.stringify(recent(b, 1000, [TONE_A]))} ${JSON.stringify(await s.t.ctx.db('calls').where({ id: bRow.id }).first('metadata', 'direction'))}`);
      });
      expect((await request(s.t.app).delete(`/v1.0/calls/${bRow.id}/hold`).set('Authorization', `Bearer ${s.f.token}`)).status).to.equal(200);
      await hears(b.audio, TONE_A, 'B hears A after the API resume', { share: 0.9, timeoutMs: 10_000 });
      // held with no music: B hears nothing at all (its re-INVITE a=inactive)
      expect((await s.api.post(`/calls/${bRow.id}/hold`, { music: '' })).status).to.equal(200);
      await silentFor(loudFrames(b, []), 1000, 'a silent hold');
      killAllSipp();
      void aPhone.done.catch(() => undefined);
      void bPhone.done.catch(() => undefined);
    } finally {
      expect((await setMetadata({ moh_url: '' })).status).to.equal(200);
    }
  });

  /** A flow that connects to `b`'s extension with `hold_music`, on a virtual number of the customer (the flow made through the API). */
  const flowNumber = async (b: Phone, holdMusic: unknown): Promise<string> => {
    const res = await s.api.post('/flows', { actions: [{ type: 'connect', option: { destinations: [{ type: 'extension', target: b.extension }], hold_music: holdMusic } }] });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    const number = `+8991${String(Math.floor(Math.random() * 1e8)).padStart(8, '0')}`;
    await numbersRepo(s.t.ctx.db).create({ customer_id: cid, number, type: 'virtual', call_flow_id: res.body.id });
    return number;
  };

  it("a flow's connect chooses the music (hold_music {url}): over the customer's, for the phone's hold and the API's; the API's own music first", async () => {
    const bad = await s.api.post('/flows', { actions: [{ type: 'connect', option: { destinations: [{ type: 'extension', target: '1' }], hold_music: 'loud' } }] });
    expect(bad.status).to.equal(400);
    expect(bad.body.error, JSON.stringify(bad.body)).to.include({ reason: 'INVALID_ARGUMENT' });
    expect(bad.body.error.details[0]).to.include({ field: 'actions[0].option.hold_music', index: 0 });
    const forbidden = await s.api.post('/flows', {
      actions: [{ type: 'connect', option: { destinations: [{ type: 'extension', target: '1' }], hold_music: { url: 'http://169.254.169.254/m.wav' } } }],
    });
    expect(forbidden.status, 'the egress policy checks the URL').to.equal(400);
    expect(forbidden.body.error.details[0].field).to.equal('actions[0].option.hold_music.url');

    expect((await setMetadata({ moh_url: await musicAt(CUSTOMER_MUSIC) })).status).to.equal(200);
    try {
      const [a, b] = [await newPhone(TONE_A), await newPhone(TONE_B)];
      const number = await flowNumber(b, { url: await musicAt(FLOW_MUSIC) });
      const bPhone = await answerOn(b, heldParty(b.audio.port));
      const aPhone = await call(s, a, holdingCaller({ user: a.user, domain: a.domain, target: number, rtpPort: a.audio.port, holdAfterMs: 3000, holdMs: 6000, talkMs: 60_000 }));
      await hears(b.audio, TONE_A, 'B hears A before the hold');
      const bRow = await callWhere(s, { customer_id: cid, direction: 'outgoing', to: b.extension }, 'progressing', 'B up');
      // A's phone holds: B hears the flow's music, not the customer's, nothing of A
      await until(() => flagsOf(bRow.id)?.peerHeld || null, 10_000, "A's hold reached B");
      // (a window wholly after the music took A's place)
      await hears(b.audio, FLOW_MUSIC, "B hears the flow's music on A's hold", { share: 0.95, timeoutMs: 4000 }).catch((e: Error) => {
        throw new Error(`${e.message} ${JSON.stringify(recent(b, 1000, [TONE_A]))} customer's ${shareOf(b.audio, CUSTOMER_MUSIC, 1000)}`);
      });
      expect(shareOf(b.audio, CUSTOMER_MUSIC, 500), "not the customer's").to.be.lessThan(0.05);
      expect(shareOf(b.audio, TONE_A, 500), 'nothing of A').to.be.lessThan(0.05);
      await hears(b.audio, TONE_A, 'B hears A after the resume', { share: 0.9, timeoutMs: 10_000 });
      // the API holds B with no music of its own: the flow's again
      expect((await s.api.post(`/calls/${bRow.id}/hold`, {})).status).to.equal(200);
      await hears(b.audio, FLOW_MUSIC, "B hears the flow's music on the API's hold", { timeoutMs: 10_000 });
      expect((await request(s.t.app).delete(`/v1.0/calls/${bRow.id}/hold`).set('Authorization', `Bearer ${s.f.token}`)).status).to.equal(200);
      await hears(b.audio, TONE_A, 'B hears A after the API resume', { share: 0.9, timeoutMs: 10_000 });
      // the API's own choice comes first: music "" is a silent hold
      expect((await s.api.post(`/calls/${bRow.id}/hold`, { music: '' })).status).to.equal(200);
      await until(() => (flagsOf(bRow.id)?.held && recent(b, 1000, []).loud === 0) || null, 10_000, `a silent hold ${JSON.stringify(recent(b, 1000, []))}`);
      killAllSipp();
      void aPhone.done.catch(() => undefined);
      void bPhone.done.catch(() => undefined);
    } finally {
      expect((await setMetadata({ moh_url: '' })).status).to.equal(200);
    }
  });

  it("a flow's connect with hold_music 'none': A's hold plays no music, B hears what A's phone sends", async () => {
    expect((await setMetadata({ moh_url: await musicAt(CUSTOMER_MUSIC) })).status).to.equal(200);
    try {
      const [a, b] = [await newPhone(TONE_A), await newPhone(TONE_B)];
      const number = await flowNumber(b, 'none');
      const bPhone = await answerOn(b, party({ rtpPort: b.audio.port, byeTimeoutMs: 60_000 }));
      const aPhone = await call(s, a, holdingCaller({ user: a.user, domain: a.domain, target: number, rtpPort: a.audio.port, holdAfterMs: 3000, holdMs: 6000, talkMs: 2000 }));
      await hears(b.audio, TONE_A, 'B hears A before the hold');
      const bRow = await callWhere(s, { customer_id: cid, direction: 'outgoing', to: b.extension }, 'progressing', 'B up');
      await until(() => flagsOf(bRow.id)?.peerHeld || null, 10_000, "A's hold reached B");
      // held: A's own audio (a=sendonly) goes on reaching B, no music takes its place; a deliberate
      // absence window (no event marks "no music came"): 1.5 s held, the last second of it judged
      await sleep(1500);
      const held = lastFrames(b, 50, [TONE_A]);
      expect(flagsOf(bRow.id)?.peerHeld, 'still held').to.equal(true);
      expect(held.other, `no music ${JSON.stringify(held)}`).to.be.lessThan(3);
      expect(shareOf(b.audio, TONE_A, 1000), 'B hears A').to.be.greaterThan(0.9);
      const [ra, rb] = await Promise.all([aPhone.done, bPhone.done]);
      expect(ra.code, ra.errors + ra.messages.slice(-2000)).to.equal(0);
      expect(rb.code, rb.errors).to.equal(0);
    } finally {
      expect((await setMetadata({ moh_url: '' })).status).to.equal(200);
    }
  });
});

/** B's phone: answers, then takes the platform's re-INVITEs: hold with music, resume, hold in silence. */
function heldParty(port: number): string {
  const steps = [answerReinvite(port, 'recvonly', 2), answerReinvite(port, 'sendrecv', 3), answerReinvite(port, 'inactive', 4)];
  return party({ rtpPort: port }).replace(/<recv request="BYE"[^>]*\/>[\s\S]*$/, `${steps.join('\n')}\n<recv request="BYE" timeout="60000"/>\n</scenario>`);
}
