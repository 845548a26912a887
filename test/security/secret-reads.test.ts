/**
 * The brief's standard: a secret is never logged or echoed whole, and goes only to the host it was
 * stored for. Every secret a customer stores or is given is planted with a known value: the webhook
 * signing secret, an access key, the login token, an agent's password, an extension's SIP password,
 * its provisioning token and the customer provisioning URL, a trunk's password and its registration
 * password, a provider's auth_password, a messaging account's secret, token and provider_data, an AI's
 * vendor keys (engine_key, tts_key, stt_key, the fallbacks' keys), a voicemail PIN, a browser phone's
 * SIP credential and the Twilio-compatible AuthToken. Then every GET route of /v1.0 (the app's own
 * route table, path parameters filled with the planted ids), the Twilio-compatible reads, the event
 * stream (what WebSocket subscribers and webhooks are sent), the webhook bodies a real loopback
 * receiver got and every line the process logged at trace level are searched for each whole value.
 * The answers that legitimately carry one (the creation's, the phone's provisioning file) are checked
 * to carry it, so the search is shown to find what it looks for.
 */
import http from 'node:http';
import { expect } from 'chai';
import request from 'supertest';
import type { Express } from 'express';
import { loadConfig } from '../../core/config';
import { createLogger } from '../../core/logger';
import { createContext, createRedis, type AppContext } from '../../control-api/context';
import { createApp, type PlatformApp } from '../../control-api/app';
import { testEnv, createFixture, type Fixture } from '../../testkit/api';
import { testDb, testDatabaseUrl } from '../../testkit/db';
import { listenHook, type HookReceiver } from '../../testkit/hook-receiver';
import { startWebhooks, type WebhookService } from '../../control-api/webhooks';
import { eventStreamKey } from '../../core/events/bus';
import { twilioAuthToken } from '../../core/twilio/auth-token';
import { accountSid } from '../../core/twilio/sids';
import { Permission } from '../../core/permissions';
import { newId } from '../../core/ids';

const KNOWN = {
  agent_password: 'Agent-pass-5ecret-0a1b2c',
  extension_password: 'Ext5ecretPass0d1e2f',
  trunk_password: 'Trunk-5ecret-3a4b5c6d',
  trunk_registration_password: 'TrunkReg-5ecret-7e8f9a',
  provider_auth_password: 'Provider-5ecret-1b2c3d',
  messaging_secret: 'msg-5ecret-4e5f6a7b',
  messaging_token: 'msg-t0ken-8c9d0e1f',
  messaging_provider_data: 'msg-app-5ecret-2a3b4c',
  ai_engine_key: 'sk-ai-5ecret-0123456789abcdef',
  ai_tts_key: 'el-tts-5ecret-0123456789wxyz',
  ai_stt_key: 'dg-stt-5ecret-0123456788899',
  ai_tts_fallback_key: 'ca-tts-5ecret-9876543213210',
  ai_llm_fallback_key: 'xai-llm-5ecret-1122334433',
  voicemail_pin: '9081726354',
};

interface Planted {
  secrets: Record<string, string>;
  /** path prefix (the part before /:id) → the planted resource's id */
  ids: Record<string, string>;
}

interface Rig {
  app: Express;
  ctx: AppContext;
  platform: PlatformApp;
  logged: string[];
  close(): Promise<void>;
}

async function rig(): Promise<Rig> {
  const logged: string[] = [];
  const db = await testDb();
  const config = loadConfig({ ...testEnv({ RATE_LIMIT_SCALE: '0', EGRESS_ALLOW_CIDRS: '127.0.0.0/8' }), DATABASE_URL: await testDatabaseUrl() } as NodeJS.ProcessEnv);
  const redis = createRedis(config.redisUrl);
  const logger = createLogger('trace', 'secret-reads', { write: (line: string) => void logged.push(line) });
  const ctx = createContext({ config, db, redis, logger });
  const platform = createApp(ctx, { cacheTtlMs: 0 });
  return { app: platform.app, ctx, platform, logged, close: async () => void redis.disconnect() };
}

type Api = (method: 'get' | 'post' | 'put', path: string, body?: object) => Promise<request.Response>;

function apiOf(app: Express, f: Fixture): Api {
  return async (method, path, body) => {
    const r = request(app)[method](`/v1.0${path}`).set('Authorization', `Bearer ${f.token}`);
    return body ? r.send(body) : r;
  };
}

/** An answer that must be 200 and carry `secret` (the creation's): the search would find it. */
function carries(r: request.Response, secret: string, what: string): void {
  expect(r.status, `${what}: ${r.text}`).to.be.oneOf([200, 201]);
  expect(r.text, `${what} carries its secret`).to.contain(secret);
}

/** The customer-level secrets: webhook secret, access key, login token, agent, Twilio AuthToken, provisioning URL. */
async function plantAccount(ctx: AppContext, api: Api, f: Fixture, p: Planted, hookUrl: string): Promise<void> {
  expect((await api('put', '/customer', { webhook_method: 'POST', webhook_uri: hookUrl })).status).to.equal(200);
  const c = (await ctx.db('customers').where({ id: f.customer.id }).first())!;
  p.secrets.webhook_secret = c.webhook_secret;
  p.secrets.twilio_auth_token = twilioAuthToken(ctx.config.jwtSecret, c.id, c.twilio_token_generation);
  p.secrets.fixture_accesskey = f.accesskey;
  p.secrets.login_token = f.token;
  const ak = await api('post', '/accesskeys', { name: 'planted' });
  carries(ak, ak.body.token, 'POST /accesskeys');
  p.secrets.accesskey = ak.body.token;
  p.ids['/accesskeys'] = ak.body.id;
  const agent = await api('post', '/agents', { username: `planted-${newId()}@example.test`, password: KNOWN.agent_password, permission: Permission.CustomerAgent });
  expect(agent.status, agent.text).to.equal(201);
  p.ids['/agents'] = agent.body.id;
  const url = await api('post', '/customer/provisioning-url');
  expect(url.status, url.text).to.equal(200);
  p.secrets.customer_provisioning_secret = /\/provisioning\/customer\/([0-9a-f]{64})\//.exec(url.body.url)?.[1] ?? '';
  expect(p.secrets.customer_provisioning_secret).to.have.length(64);
}

/** An extension (its password and provisioning token; the phone's file carries the password) and a browser phone credential. */
async function plantExtension(app: Express, ctx: AppContext, f: Fixture, api: Api, p: Planted): Promise<void> {
  const ext = await api('post', '/extensions', { extension: '3001', password: KNOWN.extension_password });
  carries(ext, KNOWN.extension_password, 'POST /extensions');
  p.ids['/extensions'] = ext.body.id;
  const tok = await api('post', `/extensions/${ext.body.id}/provisioning-token`);
  carries(tok, tok.body.token, 'POST /extensions/{id}/provisioning-token');
  p.secrets.provisioning_token = tok.body.token;
  // the one place the password goes after its creation: the phone holding the token
  carries(await request(app).get(`/provisioning/extension?token=${tok.body.token}&format=linphone`), KNOWN.extension_password, 'the provisioning file');
  // the signed-in agent's browser phone rings on that extension
  await ctx.repos.agents.update(f.admin.id, { addresses: [{ type: 'extension', target: '3001' }] });
  const sip = await api('post', '/service_agents/me/sip_credentials', { extension_id: ext.body.id });
  expect(sip.status, sip.text).to.equal(200);
  p.secrets.web_sip_password = sip.body.password;
}

/** A trunk (password, registration password), a provider, a messaging account, an AI, a voicemail box. */
async function plantResources(api: Api, p: Planted): Promise<void> {
  const trunk = await api('post', '/trunks', {
    domain_name: `secrets-${newId().slice(0, 8)}`,
    auth_types: ['basic'],
    username: 'pbxuser',
    password: KNOWN.trunk_password,
    registration: { registrar: '127.0.0.1:5999', username: 'reguser', password: KNOWN.trunk_registration_password },
  });
  expect(trunk.status, trunk.text).to.equal(200);
  p.ids['/trunks'] = trunk.body.id;
  const provider = await api('post', '/providers', { hostname: 'gw.secrets.example', name: 'planted', auth_username: 'u', auth_password: KNOWN.provider_auth_password });
  expect(provider.status, provider.text).to.equal(200);
  p.ids['/providers'] = provider.body.id;
  const acct = await api('post', '/conversation-accounts', {
    type: 'sms',
    name: 'planted',
    detail: 'planted',
    secret: KNOWN.messaging_secret,
    token: KNOWN.messaging_token,
    provider_data: { app_secret: KNOWN.messaging_provider_data },
  });
  expect(acct.status, acct.text).to.be.oneOf([200, 201]);
  p.ids['/conversation-accounts'] = p.ids['/conversation_accounts'] = acct.body.id;
  const ai = await api('post', '/ais', {
    name: 'planted',
    engine_model: 'openai.gpt-5',
    engine_key: KNOWN.ai_engine_key,
    tts_type: 'elevenlabs',
    parameter: {
      tts_key: KNOWN.ai_tts_key,
      stt_key: KNOWN.ai_stt_key,
      tts_fallback: { tts_type: 'cartesia', tts_key: KNOWN.ai_tts_fallback_key },
      llm_fallback: { engine_model: 'grok.grok-4', engine_url: 'https://api.x.ai/v1', engine_key: KNOWN.ai_llm_fallback_key },
    },
  });
  expect(ai.status, ai.text).to.equal(200);
  p.ids['/ais'] = ai.body.id;
  const box = await api('post', '/voicemail_boxes', { number: '7001', pin: KNOWN.voicemail_pin, name: 'planted' });
  expect(box.status, box.text).to.be.oneOf([200, 201]);
  p.ids['/voicemail_boxes'] = box.body.id;
}

/** Every GET route of the app with its path parameters filled: the planted id, or a fresh UUID. */
function getPaths(platform: PlatformApp, p: Planted, customerId: string): string[] {
  // the agents' views of the same records, and the superadmin's of the customer
  const ids: Record<string, string> = { ...p.ids, '/service_agents/agents': p.ids['/agents']!, '/service_agents/extensions': p.ids['/extensions']!, '/customers': customerId };
  return [
    ...new Set(
      platform.routes
        .filter((r) => r.method === 'get' && !r.path.includes('media_stream'))
        .map((r) => {
          const at = r.path.indexOf('/:');
          const planted = at > 0 ? ids[r.path.slice(0, at)] : undefined;
          let first = true;
          return r.path.replace(/:(\w+)/g, () => {
            const v = first && planted ? planted : newId();
            first = false;
            return v;
          });
        }),
    ),
  ];
}

/** The Twilio-compatible reads, with the AccountSid and the AuthToken. */
function twilioPaths(customerId: string): string[] {
  const ac = accountSid(customerId);
  return ['.json', '/Calls.json', '/IncomingPhoneNumbers.json', '/Recordings.json', '/Conferences.json', '/Queues.json', '/Notifications.json', '/Transcriptions.json'].map(
    (s) => `/2010-04-01/Accounts/${ac}${s}`,
  );
}

/** The names of the secrets `text` holds whole. */
function found(text: string, secrets: Record<string, string>): string[] {
  return Object.entries(secrets)
    .filter(([, v]) => v && text.includes(v))
    .map(([k]) => k);
}

describe('security: no read, event, webhook or log line carries a stored secret whole', function () {
  this.timeout(120_000);
  let r: Rig;
  let f: Fixture;
  let hooks: WebhookService;
  let rx: HookReceiver<string>;
  const arrived: ((body: string) => void)[] = [];

  before(async () => {
    r = await rig();
    hooks = await startWebhooks(r.ctx, { group: `secret-reads-${newId()}`, queue: `secret-reads-${newId()}` });
    const got: string[] = [];
    const server = http.createServer((req, res) => {
      let body = '';
      req.on('data', (d: Buffer) => (body += d.toString()));
      req.on('end', () => {
        got.push(body);
        res.writeHead(200).end('ok');
        for (const w of arrived.splice(0)) w(body);
      });
    });
    rx = await listenHook(server, got);
    f = await createFixture(r.ctx, { permission: Permission.ProjectSuperAdmin | Permission.CustomerAdmin });
  });
  after(async () => {
    await rx?.close();
    await hooks?.close();
    await r?.close();
  });

  it('every GET of /v1.0 and of the Twilio-compatible API, the event stream, the webhook bodies and the log', async () => {
    const api = apiOf(r.app, f);
    const p: Planted = { secrets: { ...KNOWN }, ids: {} };
    await plantAccount(r.ctx, api, f, p, rx.url);
    await plantExtension(r.app, r.ctx, f, api, p);
    await plantResources(api, p);

    const leaks: string[] = [];
    const statusOf: Record<string, number> = {};
    for (const path of getPaths(r.platform, p, f.customer.id)) {
      const res = await api('get', path);
      statusOf[path] = res.status;
      for (const name of found(res.text, p.secrets)) leaks.push(`GET /v1.0${path} carries ${name}`);
    }
    // the sweep read the planted resources themselves
    for (const [prefix, id] of Object.entries(p.ids)) expect(statusOf[`${prefix}/${id}`], `GET ${prefix}/${id}`).to.equal(200);
    expect(statusOf['/customer']).to.equal(200);
    expect(statusOf['/twilio/credentials']).to.equal(200);
    for (const path of twilioPaths(f.customer.id)) {
      const res = await request(r.app).get(path).auth(accountSid(f.customer.id), p.secrets.twilio_auth_token!);
      expect(res.status, `${path}: ${res.text}`).to.equal(200);
      for (const name of found(res.text, p.secrets)) leaks.push(`GET ${path} carries ${name}`);
    }

    // the webhook: a test event comes after every earlier event of the account (deliveries keep order)
    const last = new Promise<string>((w) => arrived.push(w));
    expect((await api('post', '/customer/webhook_test')).status).to.equal(202);
    await last;
    for (const name of found(rx.got.join('\n'), p.secrets)) leaks.push(`a webhook body carries ${name}`);
    const stream = (await r.ctx.redis.xrange(eventStreamKey(r.ctx.config.redisKeyPrefix), '-', '+')) as [string, string[]][];
    expect(stream.length).to.be.above(0);
    for (const name of found(JSON.stringify(stream), p.secrets)) leaks.push(`an event on the stream carries ${name}`);
    expect(r.logged.length).to.be.above(0);
    for (const line of r.logged) for (const name of found(line, p.secrets)) leaks.push(`the log carries ${name}: ${line.slice(0, 300)}`);
    expect(leaks).to.deep.equal([]);
  });
});
