// Issue 32, item 10: a captured Authorization / Proxy-Authorization must not work again. Each nonce
// count is accepted once, on any node (Redis): a REGISTER answer captured from sipp and an INVITE
// answer, replayed from another port in a new dialog, get a fresh challenge with stale=true and
// bind or call nothing; from another address the nonce is not ours for it (a fresh challenge). With
// qop=auth a higher nc on the same nonce is accepted (RFC 7616 §3.4), a repeated one is not; an
// answer without qop is single-use. Two media-app nodes on one Redis share the bookkeeping.
import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { digestResponse, parseDigest } from '../../media-app/kit/sip-digest';
import { truncateAll } from '../../testkit/db';
import { freePort } from '../../testkit/ports';
import { createExtension, killAllSipp, registerOnly, sipp, startPlatform, type Platform } from '../../testkit/media-app/harness';
import { digestAttempt, header, Peers, type Reply } from '../../testkit/reliability/sip/peer';

const challengeOf = (r: Reply | null, name = 'www-authenticate'): Record<string, string> => {
  const v = r?.headers.find(([n]) => n === name)?.[1];
  const d = v ? parseDigest(v) : null;
  if (!d) throw new Error(`no ${name} in ${r?.raw ?? 'no reply'}`);
  return d;
};

/** An Authorization value for a REGISTER to `domain` answering `nonce` (qop=auth with `nc`, or no qop). */
function registerAuth(o: { user: string; domain: string; password: string; realm: string; nonce: string; nc?: string }): string {
  const uri = `sip:${o.domain}`;
  const c = { username: o.user, realm: o.realm, nonce: o.nonce, uri, algorithm: 'MD5' as const, ...(o.nc ? { qop: 'auth', nc: o.nc, cnonce: randomBytes(4).toString('hex') } : {}) };
  const response = digestResponse(c, 'REGISTER', o.password);
  const qop = o.nc ? `, qop=auth, nc=${o.nc}, cnonce="${c.cnonce}"` : '';
  return `Digest username="${o.user}", realm="${o.realm}", nonce="${o.nonce}", uri="${uri}", response="${response}", algorithm=MD5${qop}`;
}

describe('security: digest answers are accepted once (nonce count tracking across nodes)', function () {
  this.timeout(90_000);
  let a: Platform;
  let b: Platform;
  const prefix = `tdr${process.pid}_${randomBytes(4).toString('hex')}:`;
  const peersA = new Peers(() => a.sipPort);
  const peersB = new Peers(() => b.sipPort);

  before(async () => {
    await truncateAll();
    const env = { REDIS_KEY_PREFIX: prefix, SIP_DIGEST_ALGORITHMS: 'MD5,SHA-256', REGISTRAR_LOCKOUT_FAILURES: '5' };
    a = await startPlatform(env);
    b = await startPlatform(env);
  });
  after(async () => {
    killAllSipp();
    peersA.close();
    peersB.close();
    await a?.close();
    await b?.close();
  });

  it('a REGISTER answer captured from sipp, replayed from another port in a new dialog: 401 stale=true, nothing bound', async () => {
    const owner = await createExtension();
    const user = owner.ext.username;
    const aor = `${user}@${owner.domain}`;
    const r = await sipp(registerOnly(user, owner.domain), [
      `127.0.0.1:${a.sipPort}`,
      '-i',
      '127.0.0.1',
      '-p',
      String(await freePort()),
      '-m',
      '1',
      '-au',
      user,
      '-ap',
      owner.password,
      '-timeout',
      '8s',
    ]).done;
    expect(r.code, r.errors + r.messages).to.equal(0);
    const captured = /^Authorization: *(.+?)\r?$/m.exec(r.messages)?.[1];
    expect(captured, 'sipp sent an Authorization').to.be.a('string');
    expect(await a.app.registrar.bindings.get(aor)).to.have.length(1);
    const capturedNonce = parseDigest(captured!)!.nonce;

    // the attacker: the same address, another port, its own Call-ID, branch and Contact
    const evil = await peersA.open('127.0.0.1');
    const replay = await digestAttempt(evil, { method: 'REGISTER', user, domain: owner.domain, password: '', replay: captured });
    expect(replay.final?.status, replay.final?.raw).to.equal(401);
    const fresh = challengeOf(replay.final);
    expect(fresh.stale).to.equal('true');
    expect(fresh.nonce).to.be.a('string').and.not.equal(capturedNonce);
    // on the other node too
    const replayB = await digestAttempt(await peersB.open('127.0.0.1'), { method: 'REGISTER', user, domain: owner.domain, password: '', replay: captured });
    expect(replayB.final?.status, replayB.final?.raw).to.equal(401);
    expect(challengeOf(replayB.final).stale).to.equal('true');
    // from another address the nonce was never issued to it: a fresh challenge
    const far = await digestAttempt(await peersA.open('127.0.0.71'), { method: 'REGISTER', user, domain: owner.domain, password: '', replay: captured });
    expect(far.final?.status, far.final?.raw).to.equal(401);
    expect(challengeOf(far.final).stale).to.equal(undefined);

    const bound = await a.app.registrar.bindings.get(aor);
    expect(
      bound.map((x) => x.contact),
      "only the owner's Contact",
    ).to.have.length(1);
    expect(bound[0]!.contact).to.not.include(`:${evil.port}`);
    // replays count as nothing: the attacker's address is not locked, its own right answer works
    expect((await digestAttempt(evil, { method: 'REGISTER', user, domain: owner.domain, password: owner.password })).final?.status).to.equal(200);
  });

  it('an INVITE answer replayed from another port in a new dialog: 407 stale=true, no call', async () => {
    const caller = await createExtension();
    const callee = await createExtension(caller.customerId);
    const user = caller.ext.username;
    const phone = await peersA.open('127.0.0.1');
    const first = await digestAttempt(phone, { method: 'INVITE', user, domain: caller.domain, password: caller.password, target: callee.ext.extension });
    // authenticated: 480 (the callee is not registered), not 403 or 407
    expect(first.final?.status, first.final?.raw).to.equal(480);
    for (const [name, peers] of [
      ['same node', peersA],
      ['other node', peersB],
    ] as const) {
      const evil = await peers.open('127.0.0.1');
      const replay = await digestAttempt(evil, { method: 'INVITE', user, domain: caller.domain, password: '', target: callee.ext.extension, replay: first.auth });
      expect(replay.final?.status, `${name}: ${replay.final?.raw}`).to.equal(407);
      expect(challengeOf(replay.final, 'proxy-authenticate').stale, name).to.equal('true');
    }
  });

  it('qop=auth: a higher nc on the same nonce is accepted, a repeated nc is not; without qop a nonce is single-use', async () => {
    const ext = await createExtension();
    const user = ext.ext.username;
    const phone = await peersA.open('127.0.0.1');
    const first = await digestAttempt(phone, { method: 'REGISTER', user, domain: ext.domain, password: ext.password });
    expect(first.final?.status).to.equal(200);
    const ch = challengeOf(first.challenge);
    const send = async (auth: string, peers = peersA) => (await digestAttempt(await peers.open('127.0.0.1'), { method: 'REGISTER', user, domain: ext.domain, password: '', replay: auth })).final;
    const o = { user, domain: ext.domain, password: ext.password, realm: ch.realm!, nonce: ch.nonce! };
    expect((await send(registerAuth({ ...o, nc: '00000002' })))?.status, 'nc 2 on node A').to.equal(200);
    expect((await send(registerAuth({ ...o, nc: '00000003' }), peersB))?.status, 'nc 3 on node B').to.equal(200);
    const again = await send(registerAuth({ ...o, nc: '00000003' }));
    expect(again?.status, 'nc 3 again').to.equal(401);
    expect(challengeOf(again).stale).to.equal('true');
    expect((await send(registerAuth({ ...o, nc: '00000002' })))?.status, 'a lower nc').to.equal(401);

    // without qop: a fresh nonce (its challenge answered wrongly: not used up), answered once
    const ch2 = challengeOf((await digestAttempt(phone, { method: 'REGISTER', user, domain: ext.domain, password: 'wrong' })).challenge);
    const noQop = registerAuth({ ...o, realm: ch2.realm!, nonce: ch2.nonce! });
    expect((await send(noQop))?.status, 'without qop, once').to.equal(200);
    const twice = await send(noQop, peersB);
    expect(twice?.status, 'without qop, twice (other node)').to.equal(401);
    expect(header(twice!, 'www-authenticate')).to.include('stale=true');
  });

  it('a challenge from one node is answered at the other', async () => {
    const ext = await createExtension();
    const phone = await peersA.open('127.0.0.1');
    const first = await digestAttempt(phone, { method: 'REGISTER', user: ext.ext.username, domain: ext.domain, password: ext.password });
    const ch = challengeOf(first.challenge);
    // a new nonce from node A, answered (for the first time) at node B
    const ch2 = challengeOf((await digestAttempt(phone, { method: 'REGISTER', user: ext.ext.username, domain: ext.domain, password: 'x' })).challenge);
    expect(ch2.nonce).to.not.equal(ch.nonce);
    const auth = registerAuth({ user: ext.ext.username, domain: ext.domain, password: ext.password, realm: ch2.realm!, nonce: ch2.nonce!, nc: '00000001' });
    const atB = await digestAttempt(await peersB.open('127.0.0.1'), { method: 'REGISTER', user: ext.ext.username, domain: ext.domain, password: '', replay: auth });
    expect(atB.final?.status, atB.final?.raw).to.equal(200);
  });
});
