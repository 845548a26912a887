// RFC 3263 server location against a real DNS server on loopback: NAPTR -> SRV -> A for URIs with a
// host name and no port; explicit transport and port bypass what they should; unknown names fail.
import { expect } from 'chai';
import { SipStack, parseUri, SipUri } from '../../../sip-server/stack';
import { resolveTarget, targetFromUri, systemResolver } from '../../../sip-server/transport';
import { pickSrv } from '../../../core/sip/locate';
import { freePort } from '../../../testkit/ports';
import { LoopbackDns } from './dns-server';
import { answerAll200, message, startStack } from './support';
import { finalOf } from './test-uac';

describe('RFC 3263 NAPTR/SRV lookups (loopback DNS server)', function () {
  this.timeout(20_000);
  let dns: LoopbackDns;
  let a: SipStack;
  let b: SipStack;
  let dead: number;

  beforeEach(async () => {
    b = await startStack();
    dead = await freePort();
    const port = b.listening[0].port;
    dns = await LoopbackDns.start({
      'srv.test': [],
      '_sip._udp.srv.test': [
        { type: 'SRV', priority: 20, weight: 10, port: dead, target: 'b.test' },
        { type: 'SRV', priority: 10, weight: 10, port, target: 'b.test' },
      ],
      'naptr.test': [
        { type: 'NAPTR', order: 20, preference: 10, flags: 's', service: 'SIP+D2U', regexp: '', replacement: '_sip._udp.naptr.test' },
        { type: 'NAPTR', order: 10, preference: 10, flags: 'S', service: 'SIP+D2T', regexp: '', replacement: '_sip._tcp.naptr.test' },
      ],
      '_sip._tcp.naptr.test': [{ type: 'SRV', priority: 1, weight: 0, port, target: 'b.test' }],
      '_sip._udp.naptr.test': [{ type: 'SRV', priority: 1, weight: 0, port: dead, target: 'b.test' }],
      'plain.test': [{ type: 'A', address: '127.0.0.1' }],
      'b.test': [{ type: 'A', address: '127.0.0.1' }],
    });
    a = await startStack({ dns: { servers: [dns.server] } });
  });
  afterEach(async () => {
    dns.close();
    await a.stop();
    await b.stop();
  });

  it('SRV: a request to sip:x@srv.test reaches the priority-10 target over UDP', async () => {
    const got = answerAll200(b);
    const res = await finalOf(a.request(message(a, 'sip:x@srv.test', 'hello')));
    expect(res.status).to.equal(200);
    expect(got[0].source!.transport).to.equal('udp');
    expect(dns.queries).to.include.members(['NAPTR srv.test', 'SRV _sip._udp.srv.test', 'A b.test']);
  });

  it('NAPTR: the lowest order (SIP+D2T) wins, so the request goes over TCP with a TCP Via', async () => {
    const got = answerAll200(b);
    const res = await finalOf(a.request(message(a, 'sip:x@naptr.test', 'hello')));
    expect(res.status).to.equal(200);
    expect(got[0].source!.transport).to.equal('tcp');
    expect(got[0].topVia!.transport.toUpperCase()).to.equal('TCP');
    expect(dns.queries).to.not.include('SRV _sip._udp.naptr.test');
  });

  it('an explicit transport skips NAPTR; an explicit port skips DNS SRV; no SRV falls back to A and 5060', async () => {
    const opts = { resolver: systemResolver([dns.server]), usable: ['udp', 'tcp'] as ('udp' | 'tcp')[] };
    const t = (u: string) => targetFromUri(parseUri(u) as SipUri);
    const explicit = await resolveTarget(t('sip:x@naptr.test;transport=udp'), opts);
    expect(explicit).to.deep.include({ transport: 'udp', address: '127.0.0.1', port: dead });
    expect(dns.queries).to.not.include('NAPTR naptr.test');
    const withPort = await resolveTarget(t('sip:x@plain.test:5099'), opts);
    expect(withPort).to.deep.include({ transport: 'udp', address: '127.0.0.1', port: 5099 });
    expect(dns.queries.filter((q) => q.includes('plain.test'))).to.deep.equal(['A plain.test']);
    const fallback = await resolveTarget(t('sip:x@plain.test'), opts);
    expect(fallback).to.deep.include({ transport: 'udp', address: '127.0.0.1', port: 5060 });
    let failed = false;
    await resolveTarget(t('sip:x@nowhere.test'), opts).catch(() => {
      failed = true;
    });
    expect(failed, 'an unknown name is an error').to.equal(true);
  });

  it('SRV selection: lowest priority, then weighted random (RFC 2782)', () => {
    const recs = [
      { priority: 5, weight: 0, n: 'z' },
      { priority: 1, weight: 10, n: 'a' },
      { priority: 1, weight: 30, n: 'b' },
    ];
    expect(pickSrv(recs, () => 0.1)!.n).to.equal('a');
    expect(pickSrv(recs, () => 0.5)!.n).to.equal('b');
    expect(pickSrv([{ priority: 3, weight: 0, n: 'only' }], () => 0.9)!.n).to.equal('only');
    expect(pickSrv([])).to.equal(undefined);
  });
});
