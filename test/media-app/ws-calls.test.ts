// Calls to and from SIP over WebSocket clients (RFC 7118): a real `ws` client calls an extension
// registered by sipp over UDP; REST POST /v1.0/calls reaches an extension registered over ws on that
// very connection; an extension registered from a sipp desk phone and a ws client at once rings both;
// a closed or vanished flow fails the call at once (no INVITE timeout). A contact registered over
// WebSocket is offered the WebRTC profile through rtpengine (a real one); the ws client answers with
// the DTLS-SRTP answer of a second rtpengine, its far end's media stack.
import { expect } from 'chai';
import request from 'supertest';
import { numbersRepo } from '../../core/repos/numbers';
import { buildTestApp, createFixture, type Fixture, type TestApp } from '../../testkit/api';
import { testDb } from '../../testkit/db';
import { freePort, udpBound } from '../../testkit/ports';
import { plainSdp, WsSipPhone, type WsMessage } from '../support/ws-sip';
import { Rtpengine } from '../../testkit/rtpengine';
import { SrtpFarEnd } from '../../testkit/srtp-far-end';
import { answeringUas, createExtension, killAllSipp, registerOnly, sipp, sleep, startPlatform, until, type Platform } from '../../testkit/media-app/harness';
import { answeringPhone } from '../../testkit/media-app/phones';

describe('SIP over WebSocket: calls', function () {
  this.timeout(90_000);
  let p: Platform;
  let t: TestApp;
  let f: Fixture;
  let wsUrl: string;
  let source: string;
  let relay: Rtpengine;
  let farRelay: Rtpengine;
  const farEnds: SrtpFarEnd[] = [];

  before(async () => {
    [relay, farRelay] = await Promise.all([Rtpengine.create(), Rtpengine.create()]);
    p = await startPlatform({ EGRESS_ALLOW_CIDRS: '127.0.0.0/8', SIP_DIGEST_ALGORITHMS: 'MD5,SHA-256', RTPENGINE_NG: relay.ng }, { sip: { listen: { wsPort: 0 } } });
    t = await buildTestApp({ env: { EGRESS_ALLOW_CIDRS: '127.0.0.0/8', RATE_LIMIT_SCALE: '0', REDIS_KEY_PREFIX: p.config.redisKeyPrefix, DATA_DIR: p.config.dataDir } });
    f = await createFixture(t.ctx);
    source = `+1415${String(Date.now()).slice(-7)}`;
    await numbersRepo(t.ctx.db).create({ customer_id: f.customer.id, number: source, type: 'normal' });
    wsUrl = `ws://127.0.0.1:${p.stack.listeningPoint('ws')!.port}`;
  });
  after(async () => {
    killAllSipp();
    await Promise.all(farEnds.map((f) => f.close()));
    await t?.close();
    await p?.close();
    await Promise.all([relay?.dispose(), farRelay?.dispose()]);
  });

  const callExtension = (extension: string, actions: object[] = [{ type: 'sleep', option: { duration: 500 } }, { type: 'hangup' }]) =>
    request(t.app)
      .post('/v1.0/calls')
      .query({ accesskey: f.accesskey })
      .send({ source: { type: 'tel', target: source }, destinations: [{ type: 'extension', target: extension }], actions });

  /** Answers the platform's INVITE (180, 200 with a DTLS-SRTP answer) and its BYE; resolves with the INVITE. */
  async function answerAndAwaitBye(phone: WsSipPhone, pauseMs = 0): Promise<{ invite: WsMessage; bye: WsMessage }> {
    const invite = await phone.nextRequest('INVITE', 10_000);
    // a browser's contact: the WebRTC profile (DTLS-SRTP, ICE) through rtpengine
    expect(invite.body).to.match(/^m=audio \d+ UDP\/TLS\/RTP\/SAVPF /m);
    expect(invite.body).to.match(/^a=fingerprint:/m);
    phone.respond(invite, 180, 'Ringing', '', 'wsans');
    if (pauseMs) await sleep(pauseMs);
    const far = new SrtpFarEnd({ host: '127.0.0.1', port: farRelay.ngPort });
    farEnds.push(far);
    phone.respond(invite, 200, 'OK', (await far.answerOffer(invite.body, await freePort())).sdp, 'wsans');
    await phone.nextRequest('ACK', 5000);
    const bye = await phone.nextRequest('BYE', 15_000);
    phone.respond(bye, 200, 'OK');
    return { invite, bye };
  }

  const rowsOf = async (customerId: string) => (await testDb())('calls').where({ customer_id: customerId }).orderBy('tm_create');

  it('a ws client calls an extension registered by sipp over UDP; the call connects and hangs up cleanly', async () => {
    const a = await createExtension();
    const b = await createExtension(a.customerId);
    const phonePort = await freePort();
    const reg = await sipp(registerOnly(b.ext.username, b.domain), [`127.0.0.1:${p.sipPort}`, '-i', '127.0.0.1', '-p', String(phonePort), '-m', '1', '-au', b.ext.username, '-ap', b.password]).done;
    expect(reg.code, reg.errors).to.equal(0);
    const callee = await answeringPhone(b, phonePort, { killAfterMs: 30_000 });
    await udpBound(phonePort); // the callee has bound its port: the INVITE waits in its socket
    const phone = await WsSipPhone.connect(wsUrl);
    try {
      expect((await phone.register(a.ext.username, a.domain, a.password)).status).to.equal(200);
      const { res, bye } = await phone.invite(`sip:${b.ext.extension}@${b.domain}`, plainSdp(await freePort()), a.password);
      expect(res.status, res.raw).to.equal(200);
      expect(res.body).to.match(/^v=0/);
      await sleep(500);
      expect((await bye()).status).to.equal(200);
      const rc = await callee.done;
      expect(rc.code, rc.errors + rc.messages).to.equal(0);
      const rows = await until(
        async () => {
          const r = await rowsOf(a.customerId);
          return r.length === 2 && r.every((c) => c.status === 'hangup') ? r : null;
        },
        10_000,
        'both legs hung up',
      );
      const master = rows.find((r) => r.direction === 'incoming')!;
      expect(master.source).to.deep.include({ type: 'extension', target: a.ext.extension });
      expect(master).to.include({ hangup_by: 'remote', hangup_reason: 'normal' });
    } finally {
      await phone.close();
    }
  });

  it('POST /v1.0/calls to an extension registered over ws: the INVITE arrives on that connection', async () => {
    const { ext, domain, password } = await createExtension(f.customer.id);
    const phone = await WsSipPhone.connect(wsUrl);
    try {
      expect((await phone.register(ext.username, domain, password)).status).to.equal(200);
      const answered = answerAndAwaitBye(phone);
      const r = await callExtension(ext.extension);
      expect(r.status, JSON.stringify(r.body)).to.equal(200);
      const { invite } = await answered;
      expect(invite.raw.split('\r\n')[0]).to.equal(`INVITE sip:${ext.username}@${phone.host};transport=ws SIP/2.0`);
      expect(invite.header('via')).to.match(/^SIP\/2\.0\/WS 127\.0\.0\.1:\d+;branch=/);
      expect(invite.header('contact')).to.match(/;transport=ws>/);
    } finally {
      await phone.close();
    }
  });

  it('an extension registered from a sipp desk phone and a ws client rings both; the one that answers wins, the other is cancelled', async () => {
    const { ext, domain, password } = await createExtension(f.customer.id);
    const phonePort = await freePort();
    const reg = await sipp(registerOnly(ext.username, domain), [`127.0.0.1:${p.sipPort}`, '-i', '127.0.0.1', '-p', String(phonePort), '-m', '1', '-au', ext.username, '-ap', password]).done;
    expect(reg.code, reg.errors).to.equal(0);
    // the desk phone rings and is cancelled
    const desk = sipp(answeringUas({ cancel: true, inviteTimeoutMs: 20_000 }), ['-i', '127.0.0.1', '-p', String(phonePort), '-m', '1'], { killAfterMs: 30_000 });
    await udpBound(phonePort); // the desk phone has bound its port: the INVITE waits in its socket
    const phone = await WsSipPhone.connect(wsUrl);
    try {
      expect((await phone.register(ext.username, domain, password)).status).to.equal(200);
      expect(await p.app.registrar.bindings.get(`${ext.username}@${domain}`)).to.have.length(2);
      const answered = answerAndAwaitBye(phone, 800);
      const r = await callExtension(ext.extension);
      expect(r.status, JSON.stringify(r.body)).to.equal(200);
      await answered;
      const rd = await desk.done;
      expect(rd.code, 'desk phone: ' + rd.errors + rd.messages).to.equal(0);
    } finally {
      await phone.close();
    }
  });

  it('the ws connection closed: the binding is gone and a call to it is refused at once', async () => {
    const { ext, domain, password } = await createExtension(f.customer.id);
    const phone = await WsSipPhone.connect(wsUrl);
    expect((await phone.register(ext.username, domain, password)).status).to.equal(200);
    await phone.close();
    await until(async () => (await p.app.registrar.bindings.get(`${ext.username}@${domain}`)).length === 0, 3000, 'binding gone');
    const r = await callExtension(ext.extension);
    // control-api sees the extension unregistered
    expect(r.status, JSON.stringify(r.body)).to.equal(409);
    expect(r.body.error.details[0]).to.include({ issue: 'not registered' });
  });

  it('a binding whose ws connection vanished without notice fails the call with 430 at once, not after a timeout', async () => {
    const { ext, domain, password } = await createExtension(f.customer.id);
    const phone = await WsSipPhone.connect(wsUrl);
    expect((await phone.register(ext.username, domain, password)).status).to.equal(200);
    const aor = `${ext.username}@${domain}`;
    const [binding] = await p.app.registrar.bindings.get(aor);
    await phone.close();
    await until(async () => (await p.app.registrar.bindings.get(aor)).length === 0, 3000, 'binding gone');
    // the binding written back as if the close notice had been lost (another node, a restart)
    await p.app.registrar.bindings.update(aor, [{ binding: { ...binding!, cseq: binding!.cseq + 1 }, expires: 600 }]);
    const started = Date.now();
    const r = await callExtension(ext.extension);
    expect(r.status, JSON.stringify(r.body)).to.equal(200);
    const id = r.body.calls?.[0]?.id ?? r.body[0]?.id ?? r.body.id;
    const row = await until(
      async () => {
        const rows = await (await testDb())('calls').where({ customer_id: f.customer.id, direction: 'outgoing' }).orderBy('tm_create', 'desc').limit(1);
        return rows[0]?.status === 'hangup' ? rows[0] : null;
      },
      5000,
      'the call to hang up',
    );
    expect(Date.now() - started).to.be.lessThan(3000);
    expect(row.hangup_reason, String(id)).to.equal('failed');
  });
});
