// BLF keys in the provisioning documents: an extension's `blf_keys` (set through the real control-api
// with its Postgres and Redis) rendered as busy lamp keys for Yealink, Polycom, Grandstream and Snom,
// fetched from the provisioning URL as a phone of each family fetches it; bad keys are refused with
// the error envelope and change nothing.
import { expect } from 'chai';
import request from 'supertest';
import { actors, as, reset, startHarness, type Harness } from '../control-api/resources/support';
import { parseXmlStrict, find } from '../control-api/resources/xml-check';
import { UA, grandstreamXml, yealinkCfg } from '../control-api/resources/provisioning-files';

describe('BLF keys in the provisioning documents', function () {
  this.timeout(30_000);
  let h: Harness;

  before(async () => {
    h = await startHarness();
  });
  after(async () => h?.close());

  async function setup() {
    await reset();
    const a = await actors(h);
    const mk = async (extension: string, extra: Record<string, unknown> = {}) => {
      const r = await as(h, a.admin)
        .post('/v1.0/extensions')
        .send({ extension, password: 'blf-secret-pass-7', ...extra });
      expect(r.status, JSON.stringify(r.body)).to.equal(200);
      return r.body as { id: string; extension: string; domain_name: string; blf_keys: string[] };
    };
    const k1 = await mk('2001');
    const k2 = await mk('2002');
    const phone = await mk('2000', { blf_keys: ['2002', '2001'] });
    expect(phone.blf_keys).to.deep.equal(['2002', '2001']);
    const token = (await as(h, a.admin).post(`/v1.0/extensions/${phone.id}/provisioning-token`)).body.token as string;
    return { a, k1, k2, phone, token };
  }
  const fetchAs = (token: string, ua: string) => request(h.app).get(`/provisioning/extension?token=${token}`).set('User-Agent', ua);

  it('renders the keys in order for each family', async () => {
    const { phone, token } = await setup();
    const domain = phone.domain_name;

    const y = yealinkCfg((await fetchAs(token, UA.yealink)).text);
    expect([2, 3].map((n) => [y.get(`linekey.${n}.type`), y.get(`linekey.${n}.line`), y.get(`linekey.${n}.value`), y.get(`linekey.${n}.label`)])).to.deep.equal([
      ['16', '1', '2002', '2002'],
      ['16', '1', '2001', '2001'],
    ]);
    expect(y.has('linekey.4.type')).to.equal(false);

    const poly = parseXmlStrict((await fetchAs(token, UA.polycom)).text);
    const att = find(poly, (e) => e.name === 'attendant')!.attrs;
    expect(att['attendant.reg']).to.equal('1');
    expect([att['attendant.resourceList.1.address'], att['attendant.resourceList.2.address']]).to.deep.equal([`2002@${domain}`, `2001@${domain}`]);
    expect(att['attendant.resourceList.1.type']).to.equal('normal');

    const gs = grandstreamXml((await fetchAs(token, UA.grandstream)).text).p;
    expect([gs.P323, gs.P301, gs.P302, gs.P303]).to.deep.equal(['1', '0', '2002', '2002']);
    expect([gs.P324, gs.P304, gs.P305, gs.P306]).to.deep.equal(['1', '0', '2001', '2001']);

    const snom = parseXmlStrict((await request(h.app).get(`/provisioning/extension?token=${token}&format=snom`)).text);
    const fkeys = find(snom, (e) => e.name === 'functionKeys')!.children;
    expect(fkeys.map((k) => [k.attrs.idx, k.attrs.context, k.text])).to.deep.equal([
      ['0', '1', `blf <sip:2002@${domain}>`],
      ['1', '1', `blf <sip:2001@${domain}>`],
    ]);
  });

  it('no keys: no key settings at all', async () => {
    const { a, phone, token } = await setup();
    expect((await as(h, a.admin).put(`/v1.0/extensions/${phone.id}`).send({ blf_keys: [] })).body.blf_keys).to.deep.equal([]);
    expect((await fetchAs(token, UA.yealink)).text).not.to.contain('linekey.');
    expect((await fetchAs(token, UA.polycom)).text).not.to.contain('attendant');
    expect((await fetchAs(token, UA.grandstream)).text).not.to.contain('<P323>');
  });

  it("refuses another customer's, unknown and repeated keys with 400 naming blf_keys, keeping the keys before", async () => {
    const { a, phone } = await setup();
    const other = await actors(h);
    const theirs = (await as(h, other.admin).post('/v1.0/extensions').send({ extension: '2009', password: 'blf-secret-pass-7' })).body as { extension: string };
    for (const keys of [[theirs.extension], ['nobody'], ['2001', '2001'], Array.from({ length: 33 }, (_, i) => `k${i}`), [''], 'x']) {
      const r = await as(h, a.admin).put(`/v1.0/extensions/${phone.id}`).send({ blf_keys: keys });
      expect(r.status, JSON.stringify(keys)).to.equal(400);
      expect(r.body.error?.status, JSON.stringify(r.body)).to.equal('INVALID_ARGUMENT');
      expect(JSON.stringify(r.body)).to.contain('blf_keys');
    }
    const created = await as(h, a.admin)
      .post('/v1.0/extensions')
      .send({ extension: '2010', password: 'blf-secret-pass-7', blf_keys: ['nobody'] });
    expect(created.status).to.equal(400);
    expect((await as(h, a.admin).get(`/v1.0/extensions/${phone.id}`)).body.blf_keys).to.deep.equal(['2002', '2001']);
    expect((await as(h, a.admin).get('/v1.0/extensions')).body.result.map((e: { extension: string }) => e.extension)).not.to.include('2010');
  });
});
