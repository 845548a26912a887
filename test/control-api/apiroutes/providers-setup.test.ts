// POST /providers/setup against a stand-in of Telnyx's API v2 on loopback (a real HTTP server that
// answers GET /v2/balance and POST /v2/credential_connections as Telnyx does, checking the bearer
// key): the key is checked, the credential connection made with a fresh user and password, and the
// provider written with them (sip.telnyx.com). A refused key is 400 with nothing written; a carrier
// error is 503; only a ProjectSuperAdmin; bad bodies are 400.
import http from 'node:http';
import { expect } from 'chai';
import { as } from '../resources/support';
import { useParties } from './support';

const GOOD_KEY = 'KEY0123456789abcdef';

interface Seen {
  method: string;
  path: string;
  auth: string;
  body: Record<string, unknown>;
}

describe('POST /providers/setup (telnyx)', function () {
  this.timeout(20000);
  const pt = useParties({ EGRESS_ALLOW_CIDRS: '127.0.0.0/8' });
  let server: http.Server;
  let failCreate = false;
  const seen: Seen[] = [];
  let saved: string | undefined;

  before(async () => {
    server = http.createServer((req, res) => {
      let raw = '';
      req.on('data', (c: Buffer) => (raw += c));
      req.on('end', () => {
        const body = raw ? (JSON.parse(raw) as Record<string, unknown>) : {};
        seen.push({ method: req.method ?? '', path: req.url ?? '', auth: req.headers.authorization ?? '', body });
        const send = (status: number, json: object) => res.writeHead(status, { 'Content-Type': 'application/json' }).end(JSON.stringify(json));
        if (req.headers.authorization !== `Bearer ${GOOD_KEY}`) return send(401, { errors: [{ code: '10009', title: 'Authentication failed', detail: 'The API key is invalid.' }] });
        if (req.method === 'GET' && req.url === '/v2/balance') return send(200, { data: { record_type: 'balance', balance: '10.00', currency: 'USD' } });
        if (req.method === 'POST' && req.url === '/v2/credential_connections') {
          if (failCreate) return send(422, { errors: [{ code: '10015', title: 'Invalid value', detail: 'user_name has already been taken' }] });
          return send(201, { data: { id: '1684641123236054244', record_type: 'credential_connection', connection_name: body.connection_name, user_name: body.user_name, active: true } });
        }
        send(404, { errors: [{ title: 'Not Found' }] });
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    saved = process.env.TELNYX_API_URL;
    process.env.TELNYX_API_URL = `http://127.0.0.1:${(server.address() as { port: number }).port}/v2`;
  });
  after(() => {
    if (saved === undefined) delete process.env.TELNYX_API_URL;
    else process.env.TELNYX_API_URL = saved;
    server?.close();
  });
  beforeEach(() => {
    seen.length = 0;
    failCreate = false;
  });

  const setup = (token: string, body: object) => as(pt.h, token).post('/v1.0/providers/setup').send(body);
  const count = async () => Number((await pt.h.t.ctx.db('providers').whereNull('tm_delete').count({ n: '*' }).first())?.n ?? 0);

  it('checks the key, makes the credential connection and writes the provider with its user and password', async () => {
    const r = await setup(pt.su.token, { carrier: 'telnyx', name: 'My Telnyx Trunk', detail: 'primary', credentials: { api_key: GOOD_KEY } });
    expect(r.status, JSON.stringify(r.body)).to.equal(200);
    expect(seen.map((s) => `${s.method} ${s.path}`)).to.deep.equal(['GET /v2/balance', 'POST /v2/credential_connections']);
    const made = seen[1]!.body;
    expect(made).to.include({ connection_name: 'My Telnyx Trunk', active: true });
    expect(made.user_name).to.match(/^ov[0-9a-f]{16}$/);
    expect(String(made.password)).to.have.length.above(20);
    expect(r.body).to.include({ type: 'sip', hostname: 'sip.telnyx.com', name: 'My Telnyx Trunk', detail: 'primary', auth_username: made.user_name });
    expect(r.body).to.not.have.property('auth_password');
    const row = await pt.h.t.ctx.db('providers').where({ id: r.body.id }).first();
    expect(row!.auth_password, 'the provider authenticates with the connection password').to.equal(made.password);
    expect((await as(pt.h, pt.su.token).get(`/v1.0/providers/${r.body.id}`)).body.id).to.equal(r.body.id);
  });

  it('a refused key is 400 and writes nothing; a carrier error is 503; only a ProjectSuperAdmin; bad bodies 400', async () => {
    const before = await count();
    const refused = await setup(pt.su.token, { carrier: 'telnyx', name: 't', credentials: { api_key: 'KEYwrong000000000' } });
    expect([refused.status, refused.body.error.reason]).to.deep.equal([400, 'INVALID_ARGUMENT']);
    expect(refused.body.error.message).to.match(/api_key/);
    failCreate = true;
    const failed = await setup(pt.su.token, { carrier: 'telnyx', name: 't', credentials: { api_key: GOOD_KEY } });
    expect(failed.status).to.equal(503);
    expect(failed.body.error.message).to.match(/422.*already been taken/);
    expect(await count(), 'nothing written').to.equal(before);
    seen.length = 0;
    expect((await setup(pt.a.admin, { carrier: 'telnyx', name: 't', credentials: { api_key: GOOD_KEY } })).status).to.equal(403);
    for (const body of [
      {},
      { carrier: 'twilio', name: 't', credentials: { api_key: GOOD_KEY } },
      { carrier: 'telnyx', credentials: { api_key: GOOD_KEY } },
      { carrier: 'telnyx', name: 't', credentials: {} },
      { carrier: 'telnyx', name: 't', credentials: { api_key: 'with space key' } },
    ])
      expect((await setup(pt.su.token, body)).status, JSON.stringify(body)).to.equal(400);
    expect(seen, 'the carrier is not asked for a refused request').to.deep.equal([]);
  });
});
