// QR provisioning on a default install (no wildcard DNS): every vendor document carries an outbound
// proxy (the advertised SIP address, port and transport), while the account's domain stays the
// extension's registration domain {label}.reg.{SIP_DOMAIN}. Only documents are fetched here.
import { expect } from 'chai';
import request from 'supertest';
import { startHarness, actors, reset, as, type Harness } from './support';
import { parseXmlStrict, find, type XmlElement } from './xml-check';
import { loadConfig } from '../../../core/config';
import { testEnv } from '../../../testkit/api';

async function documents(h: Harness) {
  await reset();
  const a = await actors(h);
  const ext = (await as(h, a.admin).post('/v1.0/extensions').send({ extension: '7001', password: 'secret-pass-1' })).body;
  const t = (await as(h, a.admin).post(`/v1.0/extensions/${ext.id}/provisioning-token`)).body;
  const get = async (format: string) => {
    const r = await request(h.app).get(`/provisioning/extension?token=${t.token}&format=${format}`);
    expect(r.status, format).to.equal(200);
    return r.text;
  };
  return { domain: ext.domain_name as string, get };
}

const linphoneEntry = (root: XmlElement, name: string) => find(root, (e) => e.attrs.name === name)?.text;
const yealink = (text: string) =>
  new Map(
    text
      .trim()
      .split('\n')
      .slice(1)
      .map((l) => l.split(' = ') as [string, string]),
  );
const gs = (text: string) => Object.fromEntries(parseXmlStrict(text).children[0]!.children.map((c) => [c.name, c.text]));
const snom = (text: string) => Object.fromEntries(parseXmlStrict(text).children[0]!.children.map((c) => [c.name, c.text]));
const polycom = (text: string) => parseXmlStrict(text).children[0]!.attrs;

describe('provisioning: outbound proxy without wildcard DNS', function () {
  describe('default install (PROVISIONING_WILDCARD_DNS unset)', () => {
    let h: Harness;
    before(async () => {
      h = await startHarness({ SIP_ADVERTISED_HOST: 'edge.example.test', SIP_PORT: '5080', PROVISIONING_SIP_TRANSPORT: 'tcp' });
    });
    after(async () => h.close());

    it('each of the five formats names the advertised SIP address as outbound proxy and keeps the label domain', async () => {
      const { domain, get } = await documents(h);
      expect(domain).to.match(/\.reg\.sip\.example\.test$/);
      const lin = parseXmlStrict(await get('linphone'));
      expect(linphoneEntry(lin, 'reg_proxy')).to.equal('<sip:edge.example.test:5080;transport=tcp>');
      expect(linphoneEntry(lin, 'reg_route')).to.equal('<sip:edge.example.test:5080;transport=tcp;lr>');
      expect(linphoneEntry(lin, 'reg_identity')).to.equal(`sip:7001@${domain}`);
      const y = yealink(await get('yealink'));
      expect(y.get('account.1.sip_server.1.address')).to.equal(domain);
      expect(y.get('account.1.outbound_proxy_enable')).to.equal('1');
      expect(y.get('account.1.outbound_proxy.1.address')).to.equal('edge.example.test');
      expect(y.get('account.1.outbound_proxy.1.port')).to.equal('5080');
      expect(y.get('account.1.sip_server.1.transport_type')).to.equal('1');
      const g = gs(await get('grandstream'));
      expect(g.P47).to.equal(domain);
      expect(g.P48).to.equal('edge.example.test:5080');
      expect(g.P130).to.equal('1');
      const p = polycom(await get('polycom'));
      expect(p['reg.1.address']).to.equal(`7001@${domain}`);
      expect(p['reg.1.server.1.address']).to.equal(domain);
      expect(p['reg.1.outboundProxy.address']).to.equal('edge.example.test');
      expect(p['reg.1.outboundProxy.port']).to.equal('5080');
      expect(p['reg.1.outboundProxy.transport']).to.equal('TCPOnly');
      const s = snom(await get('snom'));
      expect(s.user_host).to.equal(domain);
      expect(s.user_outbound).to.equal('edge.example.test:5080;transport=tcp');
    });
  });

  describe('PROVISIONING_WILDCARD_DNS=true', () => {
    let h: Harness;
    before(async () => {
      h = await startHarness({ SIP_ADVERTISED_HOST: 'edge.example.test', PROVISIONING_WILDCARD_DNS: 'true' });
    });
    after(async () => h.close());

    it('no outbound proxy: the phones resolve their registration domain', async () => {
      const { domain, get } = await documents(h);
      const lin = parseXmlStrict(await get('linphone'));
      expect(linphoneEntry(lin, 'reg_proxy')).to.equal(`<sip:${domain};transport=udp>`);
      expect(linphoneEntry(lin, 'reg_route')).to.equal(undefined);
      expect(yealink(await get('yealink')).get('account.1.outbound_proxy_enable')).to.equal('0');
      expect(gs(await get('grandstream')).P48).to.equal('');
      expect(polycom(await get('polycom'))['reg.1.outboundProxy.address']).to.equal(undefined);
      expect(snom(await get('snom')).user_outbound).to.equal(`${domain};transport=udp`);
    });
  });

  describe('PROVISIONING_SIP_PROXY', () => {
    let h: Harness;
    before(async () => {
      h = await startHarness({ SIP_ADVERTISED_HOST: 'edge.example.test', PROVISIONING_SIP_PROXY: 'sbc.example.test:5070' });
    });
    after(async () => h.close());

    it('an explicit proxy wins over the advertised address', async () => {
      const { get } = await documents(h);
      expect(linphoneEntry(parseXmlStrict(await get('linphone')), 'reg_route')).to.equal('<sip:sbc.example.test:5070;transport=udp;lr>');
      expect(gs(await get('grandstream')).P48).to.equal('sbc.example.test:5070');
    });
  });

  it('a bad PROVISIONING_WILDCARD_DNS stops the start naming it', () => {
    expect(() => loadConfig(testEnv({ PROVISIONING_WILDCARD_DNS: 'maybe' }) as NodeJS.ProcessEnv, { persistSecret: false })).to.throw(/PROVISIONING_WILDCARD_DNS/);
  });
});
