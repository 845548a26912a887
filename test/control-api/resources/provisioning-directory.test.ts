// Desk phones that treat the provisioning URL as a directory (issue #32 item 7): the files each
// vendor appends, under the extension's token URL and under the customer's DHCP option 66 URL, with
// the MAC bound through the API. Real control-api app, real Postgres and Redis; documents parsed as a
// phone reads them.
import { expect } from 'chai';
import request from 'supertest';
import { startHarness, actors, reset, as, type Harness, type Actors } from './support';
import { UA, ciscoXml, fanvilXml, grandstreamXml, polycomMaster, polycomPhone, yealinkCfg } from './provisioning-files';

const MAC = '805ec0a1b2c3';
const PASSWORD = 'dir-secret-pass-1';

describe('provisioning: directory fetch by desk phones', function () {
  let h: Harness;
  let a: Actors;

  before(async () => {
    h = await startHarness({ SIP_ADVERTISED_HOST: 'edge.example.test' });
  });
  after(async () => h.close());
  beforeEach(async () => {
    await reset();
    a = await actors(h);
  });

  const api = () => as(h, a.admin);
  async function extension(extension: string, mac?: string | null) {
    const r = await api()
      .post('/v1.0/extensions')
      .send({ extension, password: `${PASSWORD}-${extension}`, ...(mac === undefined ? {} : { mac }) });
    expect(r.status, JSON.stringify(r.body)).to.equal(200);
    return r.body as { id: string; username: string; domain_name: string; mac: string | null };
  }
  async function tokenUrl(extId: string): Promise<string> {
    const t = await api().post(`/v1.0/extensions/${extId}/provisioning-token`);
    expect(t.status).to.equal(200);
    return new URL(t.body.url).pathname + new URL(t.body.url).search;
  }
  async function customerUrl(): Promise<string> {
    const r = await api().post('/v1.0/customer/provisioning-url');
    expect(r.status, JSON.stringify(r.body)).to.equal(200);
    expect(r.body.url).to.match(/^https:\/\/pbx\.example\.test\/provisioning\/customer\/[0-9a-f]{64}\/$/);
    return new URL(r.body.url).pathname;
  }
  const get = (path: string, ua?: string) => {
    const r = request(h.app).get(path);
    return ua ? r.set('User-Agent', ua) : r;
  };

  describe('the MAC of an extension (API)', () => {
    it('accepts the common notations and shows 12 lowercase hex digits; null unbinds', async () => {
      for (const [i, m] of ['805EC0A1B2C3', '80:5e:c0:a1:b2:c3', '80-5E-C0-A1-B2-C3', '805e.c0a1.b2c3'].entries()) {
        const e = await extension(`31${i}`, m);
        expect(e.mac).to.equal(MAC);
        expect((await api().put(`/v1.0/extensions/${e.id}`).send({ mac: null })).body.mac).to.equal(null);
      }
      const e = await extension('320');
      expect(e.mac).to.equal(null);
      const put = await api().put(`/v1.0/extensions/${e.id}`).send({ mac: '00:04:F2:11:22:33', name: 'Desk' });
      expect(put.status, JSON.stringify(put.body)).to.equal(200);
      expect(put.body).to.include({ mac: '0004f2112233', name: 'Desk' });
      expect((await api().get(`/v1.0/extensions/${e.id}`)).body.mac).to.equal('0004f2112233');
      // A PUT without mac keeps it.
      expect((await api().put(`/v1.0/extensions/${e.id}`).send({ detail: 'x' })).body.mac).to.equal('0004f2112233');
    });

    it('the OpenAPI document has the mac field and the customer provisioning URL routes', async () => {
      const doc = (await request(h.app).get('/v1.0/openapi.json')).body;
      expect(doc.paths['/customer/provisioning-url']).to.have.keys('post', 'get', 'delete');
      expect(doc.paths['/customer/provisioning-url'].post['x-permission']).to.equal('admin');
      const text = JSON.stringify(doc.paths['/extensions'].post);
      expect(text).to.contain('"mac"');
      expect(JSON.stringify(doc.paths['/extensions/{id}'].put)).to.contain('"mac"');
    });

    it('refuses malformed, zero, broadcast and multicast MACs with 400 naming mac, and changes nothing', async () => {
      const e = await extension('330', MAC);
      for (const bad of [
        '',
        '805ec0a1b2',
        '805ec0a1b2c3d4',
        '805ec0a1b2cg',
        '80:5e:c0:a1:b2',
        '80:5e-c0:a1:b2:c3',
        '805ec0a1b2c3 x',
        '000000000000',
        'ff:ff:ff:ff:ff:ff',
        '01:00:5e:00:00:01',
        'x'.repeat(40),
      ]) {
        const put = await api().put(`/v1.0/extensions/${e.id}`).send({ mac: bad, name: 'changed' });
        expect(put.status, bad).to.equal(400);
        expect(put.body.error.status).to.equal('INVALID_ARGUMENT');
        expect(JSON.stringify(put.body.error), bad).to.contain('mac');
        const post = await api().post('/v1.0/extensions').send({ extension: '331', mac: bad });
        expect(post.status, bad).to.equal(400);
      }
      const now = (await api().get(`/v1.0/extensions/${e.id}`)).body;
      expect(now).to.include({ mac: MAC, name: '' });
      expect((await api().get('/v1.0/extensions')).body.result).to.have.length(1);
    });

    it('a MAC is bound to one live extension per customer: 409; free again after unbind or delete; other customers may use it', async () => {
      const e1 = await extension('340', MAC);
      const dup = await api().post('/v1.0/extensions').send({ extension: '341', mac: '80:5E:C0:A1:B2:C3' });
      expect(dup.status).to.equal(409);
      expect(dup.body.error.reason).to.equal('ALREADY_EXISTS');
      expect(dup.body.error.details).to.deep.equal([{ field: 'mac' }]);
      const e2 = await extension('342');
      const clash = await api().put(`/v1.0/extensions/${e2.id}`).send({ mac: MAC, name: 'kept?' });
      expect(clash.status).to.equal(409);
      expect((await api().get(`/v1.0/extensions/${e2.id}`)).body).to.include({ mac: null, name: '' });
      const other = await actors(h);
      expect((await as(h, other.admin).post('/v1.0/extensions').send({ extension: '340', mac: MAC })).body.mac).to.equal(MAC);
      await api().delete(`/v1.0/extensions/${e1.id}`);
      expect((await api().put(`/v1.0/extensions/${e2.id}`).send({ mac: MAC })).body.mac).to.equal(MAC);
    });
  });

  describe('under the token URL (+ /<file>)', () => {
    it('the URL a Yealink treats as a directory serves its files (they were a 400, the URL worked only imported by hand)', async () => {
      const e = await extension('349');
      const url = await tokenUrl(e.id);
      const common = await get(`${url}/y000000000108.cfg`, UA.yealink);
      expect(common.status).to.equal(200);
      const mine = await get(`${url}/${MAC}.cfg`, UA.yealink);
      expect(mine.status).to.equal(200);
      expect(yealinkCfg(mine.text).get('account.1.password')).to.equal(`${PASSWORD}-349`);
    });

    it('Yealink: the common file without credentials, then {mac}.cfg with the account, appended as a Yealink does', async () => {
      const e = await extension('350', MAC);
      const url = await tokenUrl(e.id);
      const common = await get(`${url}/y000000000108.cfg`, UA.yealink);
      expect(common.status, common.text).to.equal(200);
      expect(common.text).to.not.contain(PASSWORD);
      expect([...yealinkCfg(common.text).keys()].filter((k) => k.startsWith('account.'))).to.deep.equal([]);
      const mine = await get(`${url}/${MAC}.cfg`, UA.yealink);
      expect(mine.status).to.equal(200);
      expect(mine.headers['content-disposition']).to.equal(`inline; filename="${MAC}.cfg"`);
      expect(mine.headers['cache-control']).to.contain('no-store');
      const kv = yealinkCfg(mine.text);
      expect(kv.get('account.1.password')).to.equal(`${PASSWORD}-350`);
      expect(kv.get('account.1.user_name')).to.equal('350');
      expect(kv.get('account.1.sip_server.1.address')).to.equal(e.domain_name);
      expect(kv.get('account.1.outbound_proxy.1.address')).to.equal('edge.example.test');
      // The same files as path segments of the token URL.
      const token = new URLSearchParams(url.split('?')[1]).get('token');
      expect((await get(`/provisioning/extension/${MAC.toUpperCase()}.cfg?token=${token}`, UA.yealink)).text).to.equal(mine.text);
      expect((await get(`/provisioning/extension/y000000000044.cfg?token=${token}`)).status).to.equal(200);
    });

    it('Polycom: 000000000000.cfg and {mac}.cfg name {mac}-phone.cfg, which alone carries the account', async () => {
      const e = await extension('351', MAC);
      const url = await tokenUrl(e.id);
      const master = await get(`${url}/000000000000.cfg`, UA.polycom);
      expect(master.status).to.equal(200);
      expect(polycomMaster(master.text).CONFIG_FILES).to.equal('[PHONE_MAC_ADDRESS]-phone.cfg');
      const own = await get(`${url}/${MAC}.cfg`, UA.polycom);
      expect(own.status).to.equal(200);
      expect(polycomMaster(own.text).CONFIG_FILES).to.equal(`${MAC}-phone.cfg`);
      for (const r of [master, own]) expect(r.text).to.not.contain(PASSWORD);
      const phone = polycomPhone((await get(`${url}/${MAC}-phone.cfg`, UA.polycom)).text);
      expect(phone['reg.1.auth.password']).to.equal(`${PASSWORD}-351`);
      expect(phone['reg.1.address']).to.equal(`351@${e.domain_name}`);
    });

    it('Grandstream: cfg{mac}.xml with its <mac> element', async () => {
      const e = await extension('352', MAC);
      const r = await get(`${await tokenUrl(e.id)}/cfg${MAC}.xml`, UA.grandstream);
      expect(r.status).to.equal(200);
      const g = grandstreamXml(r.text);
      expect(g.mac).to.equal(MAC);
      expect(g.p.P34).to.equal(`${PASSWORD}-352`);
      expect(g.p.P47).to.equal(e.domain_name);
      expect(g.p.P48).to.equal('edge.example.test');
    });

    it('Cisco SPA/MPP: spa{mac}.xml and {mac}.xml flat profiles; Fanvil {mac}.cfg', async () => {
      const e = await extension('353', MAC);
      const url = await tokenUrl(e.id);
      for (const [file, ua] of [
        [`spa${MAC}.xml`, UA.spa],
        [`${MAC}.xml`, UA.mpp],
      ] as const) {
        const c = ciscoXml((await get(`${url}/${file}`, ua)).text);
        expect(c).to.include({
          User_ID_1_: '353',
          Password_1_: `${PASSWORD}-353`,
          Proxy_1_: e.domain_name,
          Outbound_Proxy_1_: 'edge.example.test',
          Use_Outbound_Proxy_1_: 'Yes',
          Register_1_: 'Yes',
          SIP_Transport_1_: 'UDP',
        });
      }
      const f = fanvilXml((await get(`${url}/${MAC}.cfg`, UA.fanvil)).text);
      expect(f).to.include({ PhoneNumber: '353', RegisterUser: '353', RegisterPswd: `${PASSWORD}-353`, RegisterAddr: e.domain_name, ProxyAddr: 'edge.example.test', EnableReg: '1' });
    });

    it('an extension without a MAC answers any MAC not bound elsewhere; a MAC not its own gets 404 without credentials', async () => {
      const free = await extension('354');
      await extension('355', MAC);
      const url = await tokenUrl(free.id);
      expect((await get(`${url}/cfg0015651a2b3c.xml`, UA.grandstream)).status).to.equal(200);
      const taken = await get(`${url}/cfg${MAC}.xml`, UA.grandstream);
      expect(taken.status).to.equal(404);
      expect(taken.body.error.reason).to.equal('FILE_NOT_FOUND');
      const bound = await extension('356', '0015651a2b3d');
      const other = await get(`${await tokenUrl(bound.id)}/0015651a2b3e.cfg`, UA.yealink);
      expect(other.status).to.equal(404);
      expect(other.text).to.not.contain(PASSWORD);
    });

    it('{mac}.cfg with an unknown User-Agent and no format is a 400 naming format=, without credentials; format= picks the family', async () => {
      const e = await extension('357', MAC);
      const url = await tokenUrl(e.id);
      for (const ua of [undefined, 'curl/8.5.0', 'Mozilla/5.0']) {
        const r = await get(`${url}/${MAC}.cfg`, ua);
        expect(r.status, ua).to.equal(400);
        expect(r.body.error.status).to.equal('INVALID_ARGUMENT');
        expect(r.body.error.message).to.contain('format=');
        expect(r.text).to.not.contain(PASSWORD);
      }
      const path = `/provisioning/extension/${MAC}.cfg${url.slice(url.indexOf('?'))}`;
      expect(yealinkCfg((await get(`${path}&format=yealink`)).text).get('account.1.password')).to.equal(`${PASSWORD}-357`);
      expect((await get(`${path}&format=grandstream`)).status).to.equal(404);
    });

    it('names no phone asks for are 404; a bad token stays an empty 400', async () => {
      const e = await extension('358', MAC);
      const url = await tokenUrl(e.id);
      for (const f of ['sip.ld', `cfg${MAC}`, `${MAC}.boot`, 'y00000000010.cfg', `${MAC}-phone.xml`, '..', 'x.cfg']) {
        const r = await get(`${url}/${f}`, UA.yealink);
        expect(r.status, f).to.equal(404);
        expect(r.text).to.not.contain(PASSWORD);
      }
      for (const u of [`/provisioning/extension?token=${'0'.repeat(64)}/${MAC}.cfg`, `/provisioning/extension/${MAC}.cfg?token=${'0'.repeat(64)}`, `${url}/a/${MAC}.cfg`, `${url}/`]) {
        const r = await get(u, UA.yealink);
        expect(r.status, u).to.equal(400);
        expect(r.text).to.equal('');
      }
    });
  });

  describe('under the customer URL (DHCP option 66)', () => {
    it('the MAC in the file name selects the bound extension in each vendor format; an unbound MAC is 404', async () => {
      const yea = await extension('360', MAC);
      await extension('361', '000b82aabbcc');
      await extension('362', '0004f2aabbcc');
      const dir = await customerUrl();
      const common = await get(`${dir}y000000000108.cfg`, UA.yealink);
      expect(common.status).to.equal(200);
      expect(common.text).to.not.contain(PASSWORD);
      const kv = yealinkCfg((await get(`${dir}${MAC}.cfg`, UA.yealink)).text);
      expect(kv.get('account.1.user_name')).to.equal('360');
      expect(kv.get('account.1.sip_server.1.address')).to.equal(yea.domain_name);
      const g = grandstreamXml((await get(`${dir}cfg000b82aabbcc.xml`, UA.grandstream)).text);
      expect(g).to.deep.include({ mac: '000b82aabbcc' });
      expect(g.p.P35).to.equal('361');
      expect(g.p.P34).to.equal(`${PASSWORD}-361`);
      expect(polycomMaster((await get(`${dir}000000000000.cfg`, UA.polycom)).text).CONFIG_FILES).to.equal('[PHONE_MAC_ADDRESS]-phone.cfg');
      expect(polycomPhone((await get(`${dir}0004f2aabbcc-phone.cfg`, UA.polycom)).text)['reg.1.auth.userId']).to.equal('362');
      for (const f of ['0004f2000001.cfg', 'cfg0004f2000001.xml', '0004f2000001-phone.cfg', 'spa0004f2000001.xml']) {
        const r = await get(`${dir}${f}`, f.endsWith('.cfg') ? UA.polycom : UA.spa);
        expect(r.status, f).to.equal(404);
        expect(r.body.error.message).to.contain('MAC');
      }
      // Unbinding takes effect at once.
      await api().put(`/v1.0/extensions/${yea.id}`).send({ mac: null });
      expect((await get(`${dir}${MAC}.cfg`, UA.yealink)).status).to.equal(404);
    });

    it('is the customer own: another customer MAC is 404 there; replaced or revoked URLs are an empty 400; admin only', async () => {
      const dir = await customerUrl();
      const other = await actors(h);
      expect((await as(h, other.admin).post('/v1.0/extensions').send({ extension: '370', mac: MAC })).status).to.equal(200);
      expect((await get(`${dir}${MAC}.cfg`, UA.yealink)).status).to.equal(404);
      await extension('371', MAC);
      expect((await get(`${dir}${MAC}.cfg`, UA.yealink)).status).to.equal(200);
      expect((await api().get('/v1.0/customer/provisioning-url')).body.tm_create).to.match(/Z$/);
      const dir2 = await customerUrl();
      expect(dir2).to.not.equal(dir);
      const old = await get(`${dir}${MAC}.cfg`, UA.yealink);
      expect(old.status).to.equal(400);
      expect(old.text).to.equal('');
      expect((await get(`${dir2}${MAC}.cfg`, UA.yealink)).status).to.equal(200);
      expect((await api().delete('/v1.0/customer/provisioning-url')).status).to.equal(204);
      expect((await get(`${dir2}${MAC}.cfg`, UA.yealink)).status).to.equal(400);
      expect((await api().delete('/v1.0/customer/provisioning-url')).status).to.equal(404);
      expect((await api().get('/v1.0/customer/provisioning-url')).status).to.equal(404);
      for (const u of [`/provisioning/customer/${'a'.repeat(64)}/${MAC}.cfg`, `/provisioning/customer/xyz/${MAC}.cfg`]) {
        const r = await get(u, UA.yealink);
        expect(r.status, u).to.equal(400);
        expect(r.text).to.equal('');
      }
      expect((await as(h, a.manager).post('/v1.0/customer/provisioning-url')).status).to.equal(403);
    });
  });
});
