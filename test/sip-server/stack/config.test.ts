import { expect } from 'chai';
import { DEFAULT_SCANNER_USER_AGENTS, SipConfigError, loadSipConfig, makeSipConfig } from '../../../sip-config';

describe('sip-config', () => {
  it('defaults: UDP+TCP on 5060, TLS port 5061, drachtio on 127.0.0.1:9022, RFC timer values', () => {
    const c = loadSipConfig({});
    expect(c.listen).to.deep.include({ host: '0.0.0.0', port: 5060, tlsPort: 5061, transports: ['udp', 'tcp'] });
    expect(c.drachtio).to.deep.include({ host: '127.0.0.1', port: 9022 });
    expect(c.timers).to.deep.equal({ t1: 500, t2: 4000, t4: 5000 });
    expect(c.security.uaBlocklist).to.include('friendly-scanner');
  });

  it('reads environment variables; TLS is enabled when cert and key are set; + appends to the scanner list', () => {
    const c = loadSipConfig({
      SIP_PORT: '5070',
      SIP_ADVERTISED_HOST: '203.0.113.5',
      SIP_TLS_CERT: '/c.pem',
      SIP_TLS_KEY: '/k.pem',
      SIP_T1_MS: '100',
      DRACHTIO_SECRET: 's3cret',
      DRACHTIO_PORT: '9023',
      SIP_UA_BLOCKLIST: '+evil-bot',
      SIP_ALLOWLIST: '10.0.0.0/8, 192.0.2.1',
      SIP_MAX_SERVER_TRANSACTIONS: '100',
    });
    expect(c.listen.port).to.equal(5070);
    expect(c.listen.advertisedHost).to.equal('203.0.113.5');
    expect(c.listen.transports).to.include('tls');
    expect(c.tls).to.deep.equal({ certPath: '/c.pem', keyPath: '/k.pem' });
    expect(c.timers.t1).to.equal(100);
    expect(c.drachtio).to.deep.equal({ host: '127.0.0.1', port: 9023, secret: 's3cret' });
    expect(c.security.uaBlocklist).to.have.length(DEFAULT_SCANNER_USER_AGENTS.length + 1);
    expect(c.security.allowlist).to.deep.equal(['10.0.0.0/8', '192.0.2.1']);
    expect(c.limits.maxServerTransactions).to.equal(100);
  });

  it('reports every bad value on its own line, naming the variable', () => {
    let err: SipConfigError | undefined;
    try {
      loadSipConfig({ SIP_PORT: '70000', SIP_T1_MS: 'fast', DRACHTIO_PORT: '-1', SIP_TRANSPORTS: 'udp,carrier-pigeon' });
    } catch (e) {
      err = e as SipConfigError;
    }
    expect(err).to.be.instanceOf(SipConfigError);
    expect(err!.problems).to.have.length(4);
    expect(err!.problems[0]).to.equal('SIP_T1_MS: expected a number, got "fast"');
    expect(err!.problems.join('\n'))
      .to.match(/SIP_PORT: .*65535/)
      .and.match(/DRACHTIO_PORT: /)
      .and.match(/SIP_TRANSPORTS: /);
  });

  it('tls without certificate, and a half-configured certificate, are errors', () => {
    expect(() => makeSipConfig({ listen: { transports: ['tls'] } })).to.throw(SipConfigError, /SIP_TLS_CERT/);
    expect(() => loadSipConfig({ SIP_TLS_CERT: '/c.pem' })).to.throw(SipConfigError, /SIP_TLS_KEY: required/);
  });

  it('the scanner blocklist holds product names: monitoring tools are not in the default, a bad entry is refused', () => {
    expect(loadSipConfig({}).security.uaBlocklist).to.include.members(['friendly-scanner', 'sipvicious', 'sipcli', 'vaxsipuseragent']).and.not.include('sipsak');
    expect(loadSipConfig({ SIP_UA_BLOCKLIST: 'evil-bot, SIPCLI' }).security.uaBlocklist).to.deep.equal(['evil-bot', 'SIPCLI']);
    let err: SipConfigError | undefined;
    try {
      loadSipConfig({ SIP_UA_BLOCKLIST: '+evil bot,ok-tool,bad/1.0' });
    } catch (e) {
      err = e as SipConfigError;
    }
    expect(err).to.be.instanceOf(SipConfigError);
    expect(err!.problems).to.have.length(2);
    for (const p of err!.problems) expect(p).to.match(/^SIP_UA_BLOCKLIST: each entry is one product name/);
  });
});
