// The flood policy as pure decisions (no sockets): per address:port throttle and ban, the address
// ban only when many of its ports flood (or its ports together exceed the address's share), and the
// sources never banned: registered contacts and trunk addresses, learned from the application's 2xx.
import { expect } from 'chai';
import { parseMessage, SipRequest, SipResponse } from '../../../sip-server/message';
import { SourceRateLimiter, type RateLimitOptions } from '../../../sip-server/security/rate-limit';
import { trustFromAnswer } from '../../../sip-server/security/trusted';

const OPTS: RateLimitOptions = { requestsPerSecond: 10, burst: 10, banThreshold: 20, banSeconds: 60, addressBanPorts: 3, addressRateFactor: 4, allowlist: [] };

/** `n` requests from address:port within the same millisecond; the last verdict. */
function burst(l: SourceRateLimiter, address: string, port: number, n: number, now: number): string {
  let v = '';
  for (let i = 0; i < n; i++) v = l.take(address, port, now);
  return v;
}

function request(text: string, address: string, port: number): SipRequest {
  const r = parseMessage(text.replace(/\n/g, '\r\n')) as SipRequest;
  r.source = { transport: 'udp', address, port, localAddress: '127.0.0.1', localPort: 5060 };
  return r;
}

const REGISTER = `REGISTER sip:d.example SIP/2.0
Via: SIP/2.0/UDP 192.0.2.1:5062;branch=z9hG4bKr1
From: <sip:100@d.example>;tag=a
To: <sip:100@d.example>
Call-ID: r1
CSeq: 1 REGISTER
Contact: <sip:100@192.0.2.1:5062>
Expires: 600
Content-Length: 0

`;
const INVITE = `INVITE sip:200@d.example SIP/2.0
Via: SIP/2.0/UDP 192.0.2.1:5062;branch=z9hG4bKi1
From: <sip:100@d.example>;tag=a
To: <sip:200@d.example>
Call-ID: i1
CSeq: 1 INVITE
Content-Length: 0

`;

describe('flood policy: per address:port, NAT-friendly, trusted sources', () => {
  let l: SourceRateLimiter;
  const bans: string[] = [];
  beforeEach(() => {
    l = new SourceRateLimiter(OPTS);
    bans.length = 0;
    l.onBan = (who, scope) => bans.push(`${scope} ${who}`);
  });
  afterEach(() => l.close());

  it('a flooding port is throttled, then banned; other ports of its address are not', () => {
    expect(burst(l, '192.0.2.1', 5000, 10, 1000)).to.equal('allow');
    expect(l.take('192.0.2.1', 5000, 1000)).to.equal('throttle');
    expect(burst(l, '192.0.2.1', 5000, 19, 1000)).to.equal('banned');
    expect(bans).to.deep.equal(['port 192.0.2.1|5000']);
    expect(l.isBanned('192.0.2.1', 5000, 1001)).to.equal(true);
    expect(l.isBanned('192.0.2.1', 5001, 1001)).to.equal(false);
    expect(l.take('192.0.2.1', 5001, 1001)).to.equal('allow');
    // the ban ends after banSeconds
    expect(l.isBanned('192.0.2.1', 5000, 1000 + 60_001)).to.equal(false);
  });

  it(`${OPTS.addressBanPorts} banned ports ban the address, every port of it`, () => {
    for (const port of [1, 2, 3]) burst(l, '192.0.2.2', port, 40, 1000 + port);
    expect(bans).to.deep.equal(['port 192.0.2.2|1', 'port 192.0.2.2|2', 'port 192.0.2.2|3', 'address 192.0.2.2']);
    expect(l.isBanned('192.0.2.2', 9999, 1010)).to.equal(true);
    expect(l.take('192.0.2.2', 9999, 1010)).to.equal('banned');
  });

  it('a flood that rotates its source port is banned by the address share', () => {
    let v = '';
    for (let i = 0; i < 200 && v !== 'banned'; i++) v = l.take('192.0.2.3', 10_000 + i, 1000);
    expect(v).to.equal('banned');
    expect(bans).to.deep.equal(['address 192.0.2.3']);
  });

  it('a registered contact passes while its address is banned, and is throttled but never banned itself', () => {
    const reg = request(REGISTER, '192.0.2.4', 5062);
    const ok = reg.makeResponse(200);
    ok.headers.append('Contact', '<sip:100@192.0.2.1:5062>;expires=600');
    l.trust(trustFromAnswer(reg, ok)!);
    for (const port of [1, 2, 3]) burst(l, '192.0.2.4', port, 40, 1000);
    expect(l.isBanned('192.0.2.4', 7, 1001)).to.equal(true);
    expect(l.isBanned('192.0.2.4', 5062, 1001)).to.equal(false);
    expect(l.take('192.0.2.4', 5062, 1001)).to.equal('allow');
    expect(burst(l, '192.0.2.4', 5062, 100, 1002)).to.equal('throttle');
    expect(bans.filter((b) => b.includes('5062'))).to.deep.equal([]);
  });

  it('a trunk address (an INVITE accepted without credentials): its own port is never banned; another port of it that floods is banned alone, the address never; an allow-listed CIDR is never limited (high-bit addresses too)', () => {
    const inv = request(INVITE, '192.0.2.5', 5060);
    l.trust(trustFromAnswer(inv, inv.makeResponse(200, undefined, { toTag: 'x' }))!);
    // a flooding device on another port of the trunk's address: throttled, then that port banned
    expect(burst(l, '192.0.2.5', 40_000, OPTS.burst, 1000)).to.equal('allow');
    expect(burst(l, '192.0.2.5', 40_000, 500, 1000)).to.equal('banned');
    expect(l.isBanned('192.0.2.5', 40_000, 1001)).to.equal(true);
    for (const port of [40_001, 40_002, 40_003, 40_004]) burst(l, '192.0.2.5', port, 500, 1000);
    // the trunk's own port and a quiet new port of its address still pass
    expect(l.isBanned('192.0.2.5', 5060, 1001)).to.equal(false);
    expect(l.take('192.0.2.5', 5060, 1001)).to.equal('allow');
    expect(l.isBanned('192.0.2.5', 41_000, 1001)).to.equal(false);
    expect(l.take('192.0.2.5', 41_000, 1500)).to.equal('allow');
    const a = new SourceRateLimiter({ ...OPTS, allowlist: ['198.51.100.0/24'] });
    expect(burst(a, '198.51.100.7', 1, 500, 1000)).to.equal('allow');
    a.close();
  });

  it('what the answers teach: REGISTER 2xx trusts the contact for its expiry, un-REGISTER ends it; INVITE by digest trusts address:port', () => {
    const reg = request(REGISTER, '192.0.2.6', 5062);
    const ok = reg.makeResponse(200);
    ok.headers.append('Contact', '<sip:100@192.0.2.1:5062>;expires=300, <sip:100@198.51.100.9:5060>;expires=900');
    expect(trustFromAnswer(reg, ok)).to.deep.equal({ scope: 'contact', address: '192.0.2.6', port: 5062, seconds: 360 });
    const un = request(REGISTER.replace('Expires: 600', 'Expires: 0'), '192.0.2.6', 5062);
    expect(trustFromAnswer(un, un.makeResponse(200))).to.deep.include({ scope: 'contact', seconds: 0 });
    expect(trustFromAnswer(reg, reg.makeResponse(403))).to.equal(undefined);
    expect(trustFromAnswer(reg, reg.makeResponse(401))).to.equal(undefined);
    const digest = request(INVITE.replace('Content-Length', 'Proxy-Authorization: Digest username="100"\nContent-Length'), '192.0.2.7', 5070);
    expect(trustFromAnswer(digest, digest.makeResponse(200, undefined, { toTag: 't' }))).to.deep.equal({ scope: 'contact', address: '192.0.2.7', port: 5070, seconds: 3600 });
    const reinvite = request(INVITE.replace('To: <sip:200@d.example>', 'To: <sip:200@d.example>;tag=z'), '192.0.2.8', 5060);
    expect(trustFromAnswer(reinvite, reinvite.makeResponse(200))).to.equal(undefined);
    expect(trustFromAnswer(digest, new SipResponse(180))).to.equal(undefined);
  });
});
