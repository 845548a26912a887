// GET /v1.0/calls/{id}/media_stream end to end: sipp calls in through sip-server, the media-app
// node answers, a WebSocket client gets 20 ms chunks of the call (with the caller's tone in them)
// in each encapsulation, and what the client sends is heard on the caller's RTP. Then the refusals.
import { expect } from 'chai';
import type WebSocket from 'ws';
import { signToken } from '../../core/credentials';
import { callsRepo } from '../../core/repos/calls';
import { AS_AUDIO, AS_UUID, RTP_PAYLOAD_TYPE, bytesToUuid } from '../../core/streams/framing';
import { truncateAll, testDb } from '../../testkit/db';
import { TEST_JWT_SECRET, type Fixture } from '../../testkit/api';
import { killAllSipp, sleep, until } from '../../testkit/media-app/harness';
import { accept, closed, openWs, customerWithTrunk, level, pcmBuffer, placeCall, refusalOf, startStack, tone, type PlacedCall, type Stack } from '../../testkit/streams/support';

/** PCM of one received message, checked against its encapsulation's shape. */
function payloadOf(enc: string, m: Buffer): Buffer | null {
  if (enc === 'rtp') {
    expect(m.length).to.equal(332);
    expect(m[0]).to.equal(0x80);
    expect(m[1]! & 0x7f).to.equal(RTP_PAYLOAD_TYPE);
    return m.subarray(12);
  }
  if (enc === 'sln') {
    expect(m.length).to.equal(320);
    return m;
  }
  if (m[0] === AS_UUID) return null;
  expect(m.length).to.equal(323);
  expect(m[0]).to.equal(AS_AUDIO);
  expect(m.readUInt16BE(1)).to.equal(320);
  return m.subarray(3);
}

function clientFrame(enc: string, n: number, seq: number): Buffer {
  const pcm = pcmBuffer(tone(n, 500, 8000));
  if (enc === 'sln') return pcm;
  if (enc === 'audiosocket') return Buffer.concat([Buffer.from([AS_AUDIO, 1, 64]), pcm]);
  const h = Buffer.alloc(12);
  h[0] = 0x80;
  h[1] = 96;
  h.writeUInt16BE(seq & 0xffff, 2);
  h.writeUInt32BE(seq * 160, 4);
  h.writeUInt32BE(0x1234, 8);
  return Buffer.concat([h, pcm]);
}

/**
 * The stream of `call` in encapsulation `enc` (`url`: the media_stream URL with the owner's token): 50
 * chunks a second of the right size with the caller's tone in them, and the client's audio heard on
 * the call.
 */
async function streamsTheCall(enc: 'rtp' | 'sln' | 'audiosocket', url: string, call: PlacedCall): Promise<void> {
  const ws = await accept(url);
  const msgs: { at: number; m: Buffer }[] = [];
  ws.on('message', (m: Buffer) => msgs.push({ at: Date.now(), m }));
  await until(() => msgs.length > 5, 5000, 'first chunks');
  const start = msgs.length;
  const t0 = Date.now();
  await sleep(2000);
  const window = msgs.slice(start).filter((x) => x.at - t0 <= 2000);
  // 100 chunks expected in 2 s; a busy shared machine may bunch or delay some
  expect(window.length, 'chunks in 2 s').to.be.within(80, 120);
  if (enc === 'audiosocket') {
    expect(msgs[0]!.m[0]).to.equal(AS_UUID);
    expect(bytesToUuid(msgs[0]!.m.subarray(3))).to.equal(call.callId);
  }
  const pcms = msgs.map((x) => payloadOf(enc, x.m)).filter((p): p is Buffer => p !== null);
  if (enc === 'rtp') {
    const seqs = msgs.map((x) => x.m.readUInt16BE(2));
    for (let i = 1; i < seqs.length; i++) expect(seqs[i]).to.equal((seqs[i - 1]! + 1) & 0xffff);
    const ts = msgs.map((x) => x.m.readUInt32BE(4));
    expect((ts[ts.length - 1]! - ts[0]!) >>> 0).to.equal(160 * (ts.length - 1));
  }
  const loud = pcms.filter((p) => level(p) > 1000).length;
  expect(
    loud,
    `levels ${pcms
      .slice(0, 120)
      .map((p) => Math.round(level(p)))
      .join(',')}`,
  ).to.be.greaterThan(pcms.length * 0.4);

  // the client talks for a second: the caller hears it
  const heardBefore = call.peer.levels.length;
  let n = 0;
  await new Promise<void>((resolve) => {
    const t = setInterval(() => {
      ws.send(clientFrame(enc, n, n), { binary: true });
      if (++n >= 50) {
        clearInterval(t);
        resolve();
      }
    }, 20);
  });
  await sleep(600);
  expect(
    call.peer.voiced(heardBefore),
    `levels ${call.peer.levels
      .slice(heardBefore, heardBefore + 60)
      .map(Math.round)
      .join(',')}`,
  ).to.be.greaterThan(30);
  const bye = closed(ws);
  ws.close(1000);
  expect((await bye).code).to.equal(1000);
}

describe('media streams: GET /calls/{id}/media_stream', function () {
  this.timeout(120_000);
  let stack: Stack;
  let owner: Fixture;
  let other: Fixture;
  let call: PlacedCall;

  before(async () => {
    await truncateAll();
    stack = await startStack();
    owner = await customerWithTrunk(stack.api);
    other = await customerWithTrunk(stack.api);
    call = await placeCall(stack, owner.customer.id, [{ type: 'answer' }, { type: 'sleep', option: { duration: 40_000 } }, { type: 'hangup' }]);
  });
  after(async () => {
    call?.peer.close();
    killAllSipp();
    await stack?.close();
  });

  const url = (id: string, q: string) => `${stack.base}/v1.0/calls/${id}/media_stream?${q}`;

  for (const enc of ['rtp', 'sln', 'audiosocket'] as const) {
    it(`${enc}: 50 chunks a second of the right size with the caller's audio; the client's audio is heard on the call`, () =>
      streamsTheCall(enc, url(call.callId, `encapsulation=${enc}&token=${owner.token}`), call));
  }

  it('accepts the credential as an accesskey or an Authorization header', async () => {
    const a = await accept(url(call.callId, `encapsulation=sln&accesskey=${owner.accesskey}`));
    a.terminate();
    const r = await openWs(url(call.callId, 'encapsulation=sln'), { Authorization: `Bearer ${owner.token}` });
    expect('ws' in r).to.equal(true);
    if ('ws' in r) r.ws.terminate();
  });

  it('refuses a missing or unknown encapsulation with 400 and the error envelope', async () => {
    const missing = await refusalOf(url(call.callId, `token=${owner.token}`));
    expect(missing.status).to.equal(400);
    expect(missing.body.error).to.include({ status: 'INVALID_ARGUMENT', reason: 'MISSING_REQUEST_PARAMETER' });
    expect(missing.body.error!.message).to.match(/encapsulation/);
    expect(missing.body.error!.request_id).to.be.a('string').and.not.equal('');
    const unknown = await refusalOf(url(call.callId, `encapsulation=mp3&token=${owner.token}`));
    expect(unknown.status).to.equal(400);
    expect(unknown.body.error).to.include({ status: 'INVALID_ARGUMENT', reason: 'INVALID_REQUEST_PARAMETER' });
    expect(unknown.body.error!.message).to.match(/mp3.*rtp, sln, audiosocket/);
  });

  it("refuses without credentials (401), another customer's call and an unknown call (404), a bad id (400)", async () => {
    const none = await refusalOf(url(call.callId, 'encapsulation=rtp'));
    expect(none.status).to.equal(401);
    expect(none.body.error!.reason).to.equal('AUTHENTICATION_REQUIRED');
    const foreign = await refusalOf(url(call.callId, `encapsulation=rtp&token=${other.token}`));
    expect(foreign.status).to.equal(404);
    expect(foreign.body.error!.reason).to.equal('CALL_NOT_FOUND');
    const unknown = await refusalOf(url('6f1c3c1e-0000-4000-8000-000000000001', `encapsulation=rtp&token=${owner.token}`));
    expect(unknown.status).to.equal(404);
    expect(unknown.body.error!.reason).to.equal('CALL_NOT_FOUND');
    const bad = await refusalOf(url('not-a-uuid', `encapsulation=rtp&token=${owner.token}`));
    expect(bad.status).to.equal(400);
    expect(bad.body.error!.reason).to.equal('INVALID_ID');
  });

  it('refuses a call that is not progressing (409 CALL_STATE_INVALID) and an expired token (401)', async () => {
    const db = await testDb();
    const dialing = await callsRepo(db).create({
      customer_id: owner.customer.id,
      source: { type: 'tel', target: '+15550001', target_name: '', name: '', detail: '' },
      destination: { type: 'tel', target: '+15550002', target_name: '', name: '', detail: '' },
      direction: 'outgoing',
    } as never);
    const r = await refusalOf(url(dialing.id, `encapsulation=rtp&token=${owner.token}`));
    expect(r.status).to.equal(409);
    expect(r.body.error!.reason).to.equal('CALL_STATE_INVALID');
    const { token } = await signToken(TEST_JWT_SECRET, { typ: 'login', sub: owner.admin.id, customer_id: owner.customer.id }, -10);
    const expired = await refusalOf(url(call.callId, `encapsulation=rtp&token=${token}`));
    expect(expired.status).to.equal(401);
    expect(expired.body.error!.reason).to.equal('INVALID_CREDENTIALS');
  });

  it('closes the stream when the token expires (1008 "token expired")', async () => {
    const { token } = await signToken(TEST_JWT_SECRET, { typ: 'login', sub: owner.admin.id, customer_id: owner.customer.id }, 2);
    const ws = await accept(url(call.callId, `encapsulation=sln&token=${token}`));
    let chunks = 0;
    ws.on('message', () => chunks++);
    const c = await closed(ws);
    expect(c.code).to.equal(1008);
    expect(c.reason).to.equal('token expired');
    expect(chunks).to.be.greaterThan(10);
  });

  it('closes the stream with 1000 when the call ends, and then refuses it (409 CALL_ALREADY_HANGUP)', async () => {
    const short = await placeCall(stack, owner.customer.id, [{ type: 'answer' }, { type: 'sleep', option: { duration: 2500 } }, { type: 'hangup' }]);
    try {
      const ws: WebSocket = await accept(url(short.callId, `encapsulation=audiosocket&token=${owner.token}`));
      const msgs: Buffer[] = [];
      ws.on('message', (m: Buffer) => msgs.push(m));
      const c = await closed(ws);
      expect(c.code).to.equal(1000);
      expect(c.reason).to.equal('call ended');
      // AudioSocket peers are told first: the last message is the hangup (0x00, length 0)
      expect([...msgs[msgs.length - 1]!]).to.deep.equal([0, 0, 0]);
      await short.sipp;
      await until(async () => (await callsRepo(await testDb()).get(short.callId))?.status === 'hangup', 10_000, 'hangup row');
      const r = await refusalOf(url(short.callId, `encapsulation=rtp&token=${owner.token}`));
      expect(r.status).to.equal(409);
      expect(r.body.error!.reason).to.equal('CALL_ALREADY_HANGUP');
    } finally {
      short.peer.close();
    }
  });
});

// The same stream on the fsmrf backend: the node's calls on drachtio-fsmrf against our switch (esl/), the
// call's audio through the switch's mod_audio_fork to the node's fork server (media-server/fsmrf/fork-tap.ts).
describe('media streams on the fsmrf media backend', function () {
  this.timeout(120_000);
  let stack: Stack;
  let owner: Fixture;
  let call: PlacedCall;

  before(async () => {
    await truncateAll();
    stack = await startStack({}, { mediaServer: 'fsmrf' });
    owner = await customerWithTrunk(stack.api);
    call = await placeCall(stack, owner.customer.id, [{ type: 'answer' }, { type: 'sleep', option: { duration: 40_000 } }, { type: 'hangup' }]);
  });
  after(async () => {
    call?.peer.close();
    killAllSipp();
    await stack?.close();
  });

  for (const enc of ['rtp', 'sln'] as const) {
    it(`${enc}: 50 chunks a second of the caller's audio; the client's audio is heard on the call`, () =>
      streamsTheCall(enc, `${stack.base}/v1.0/calls/${call.callId}/media_stream?encapsulation=${enc}&token=${owner.token}`, call));
  }
});
