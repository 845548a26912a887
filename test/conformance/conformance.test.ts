/**
 * API fidelity against the reference document: every covered operation (scenarios.ts) is sent once
 * with real prerequisites, its status compared with the reference's documented 2xx and its body
 * validated (ajv) against the reference's response schema. Every other reference operation is listed
 * in coverage.json with a reason, so covered + listed is always the whole reference.
 */
import fs from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import request from 'supertest';
import { buildTestApp, createFixture, createAgent, type TestApp } from '../../testkit/api';
import { truncateAll } from '../../testkit/db';
import { startPlatform, until, type Platform } from '../../testkit/media-app/harness';
import { closeCommandBus } from '../../control-api/calls/bus';
import { LiveParties } from './live';
import { FakeTwilio } from '../control-api/messaging/support';
import { TwilioProvider } from '../../core/messaging/twilio';
import { configureMessaging } from '../../control-api/messaging/deps';
import { startLlmServer, type LlmServer } from '../../testkit/llm-server';
import { startPaddleServer, type PaddleServer } from '../support/paddle-server';
import { Permission } from '../../core/permissions';
import { Reference, describeErrors } from './reference';
import { scenarios } from './scenarios';
import type { State, Step } from './steps';

export const LISTED_KINDS = ['missing', 'not-exercisable', 'spec-governs', 'not-covered'] as const;
interface Listed {
  kind: (typeof LISTED_KINDS)[number];
  reason: string;
}
const listed = JSON.parse(fs.readFileSync(path.join(__dirname, 'coverage.json'), 'utf8')) as Record<string, Listed>;

const ref = new Reference();
const covered = Object.values(scenarios).flatMap((steps) => steps.filter((s) => !s.again).map((s) => s.op));

function templateRegex(p: string): RegExp {
  return new RegExp(
    `^${p
      .split(/\{[^}]+\}/)
      .map((x) => x.replace(/[.*+?^$()|[\]\\]/g, '\\$&'))
      .join('[^/]+')}$`,
  );
}

/** What differs between the response and the reference, or '' when it conforms. */
function difference(step: Step, res: request.Response): string {
  const op = ref.operation(step.op);
  const code = String(res.status);
  if (op.success.length ? !op.success.includes(code) : !/^2\d\d$/.test(code)) {
    return `status ${code}, the reference documents ${op.success.join(',') || '2xx'}: ${JSON.stringify(res.body).slice(0, 400)}`;
  }
  const v = ref.validator(step.op, code);
  if (v && !v(res.body)) return `body does not match the reference schema: ${describeErrors(v.errors)}`;
  return '';
}

describe('conformance: the API against the reference document', function () {
  this.timeout(40000);
  let t: TestApp;
  let p: Platform;
  const live = new LiveParties();
  // SMS goes to a real HTTP server speaking Twilio's Messages API on loopback
  const twilio = new FakeTwilio('AC' + randomBytes(16).toString('hex'), randomBytes(16).toString('hex'));
  let token: string;
  let superToken: string;
  let peerToken: string;
  let llm: LlmServer;
  let savedLlmBase: string | undefined;
  // The Paddle customer portal: a stand-in of Paddle's Billing API on loopback (settings read per request).
  let paddle: PaddleServer;
  const savedPaddle = { PADDLE_API_URL: process.env.PADDLE_API_URL, PADDLE_API_KEY: process.env.PADDLE_API_KEY };
  const s: State = {};

  before(async function () {
    this.timeout(60_000);
    // A real call plane (sip-server capturing SIP, a media-app node) for the operations on live calls,
    // on the API's database and Redis prefix; the parties it dials are sipp on loopback (live.ts).
    await truncateAll();
    p = await startPlatform({ EGRESS_ALLOW_CIDRS: '127.0.0.0/8', SIP_CAPTURE: 'on' });
    // The AI engine is a real OpenAI-speaking HTTP server on loopback, allowed by the egress policy.
    t = await buildTestApp({ env: { RATE_LIMIT_SCALE: '0', SIP_DOMAIN: 'sip.example.test', EGRESS_ALLOW_CIDRS: '127.0.0.0/8', REDIS_KEY_PREFIX: p.config.redisKeyPrefix } });
    live.db = t.ctx.db;
    await twilio.start();
    configureMessaging(t.ctx, { provider: new TwilioProvider({ accountSid: twilio.accountSid, authToken: twilio.authToken, baseUrl: twilio.baseUrl, timeoutMs: 3000 }) });
    const AUDIT = '{"overall_score":4,"dimensions":{"helpfulness":{"score":4,"reason":"clear"},"tool_usage":null},"summary":"good"}';
    llm = await startLlmServer({
      respond: (req) => {
        const system = req.messages[0]?.content ?? '';
        if (system.includes('improve system prompts')) return { text: '{"prompt":"Be concise.","rationale":"shorter"}' };
        if (system.includes('You audit an AI assistant')) return { text: AUDIT };
        if (system.includes('timeline of one run of a call flow')) return { text: '{"overall_status":"ok","narrative":"answered and ended","issues":[]}' };
        return { text: 'ok' };
      },
    });
    s.llm = llm.url;
    // Summaries use the server-wide LLM endpoint, read from the environment at request time.
    savedLlmBase = process.env.AI_LLM_BASE_URL;
    process.env.AI_LLM_BASE_URL = llm.url;
    paddle = await startPaddleServer('pdl_conformance_key_0123456789');
    process.env.PADDLE_API_URL = paddle.url;
    process.env.PADDLE_API_KEY = 'pdl_conformance_key_0123456789';
    const f = await createFixture(t.ctx);
    token = f.token;
    superToken = (await createFixture(t.ctx, { permission: Permission.ProjectSuperAdmin })).token;
    const peer = await createAgent(t.ctx, f.customer.id, Permission.CustomerAgent);
    peerToken = peer.token;
    s.peerAgent = peer.agent.id;
    s.customer = f.customer.id;
    s.email = f.customer.email;
    s.run = randomBytes(3).toString('hex');
  });
  after(async () => {
    if (savedLlmBase === undefined) delete process.env.AI_LLM_BASE_URL;
    else process.env.AI_LLM_BASE_URL = savedLlmBase;
    await llm?.close();
    for (const [k, v] of Object.entries(savedPaddle)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
    await paddle?.close();
    live.close();
    await twilio.stop();
    if (t) await closeCommandBus(t.ctx);
    await t?.close();
    await p?.close();
  });

  it(`covers or lists each of the reference's ${ref.operations.length} operations exactly once, listed ones with a reason`, () => {
    const all = ref.operations.map((o) => o.key).sort();
    expect(new Set(covered).size, 'an operation covered twice').to.equal(covered.length);
    expect(
      covered.filter((k) => listed[k]),
      'covered and listed',
    ).to.deep.equal([]);
    expect([...covered, ...Object.keys(listed)].sort()).to.deep.equal(all);
    for (const [k, v] of Object.entries(listed)) {
      expect(LISTED_KINDS, k).to.include(v.kind);
      expect(v.reason, k).to.be.a('string').and.have.length.above(10);
    }
  });

  for (const [name, steps] of Object.entries(scenarios)) {
    describe(name, () => {
      for (const step of steps) {
        it(`${step.op}${step.differs ? ' (known difference)' : ''}`, async () => {
          const op = ref.operation(step.op);
          if (step.prepare) await step.prepare(s, live);
          const bearer = `Bearer ${step.as === 'superadmin' ? superToken : step.as === 'peer' ? peerToken : token}`;
          if (step.until) {
            const { url: waitUrl, done } = step.until;
            await until(
              async () =>
                done(
                  (
                    await request(t.app)
                      .get(`/v1.0${waitUrl(s)}`)
                      .set('Authorization', bearer)
                  ).body as Record<string, unknown>,
                ) || null,
              15_000,
              `${step.op}: prerequisite ready`,
            );
          }
          const url = step.url ? step.url(s) : op.path;
          expect(url, 'the concrete path fits the operation').to.match(templateRegex(op.path));
          expect(url, 'every prerequisite exists').not.to.match(/undefined/);
          let req = request(t.app)[op.method](`/v1.0${url}`).set('Authorization', bearer);
          if (step.query) req = req.query(step.query(s));
          if (step.multipart) {
            const m = step.multipart(s);
            for (const [k, v] of Object.entries(m.fields)) req = req.field(k, v);
            req = req.attach(m.file.field, m.file.content, { filename: m.file.name, contentType: m.file.type });
          }
          const res = await (step.body ? req.send(step.body(s) as object) : req);
          if (step.save && /^2/.test(String(res.status))) step.save(s, res.body as Record<string, unknown>);
          const diff = difference(step, res);
          if (step.differs) {
            expect(diff, `${step.op} now conforms: remove its known difference (${step.differs.reason})`).not.to.equal('');
            expect(diff, `${step.op} differs otherwise than known (${step.differs.reason})`).to.match(step.differs.shows);
          } else {
            expect(diff, `${step.op}`).to.equal('');
          }
        });
      }
    });
  }
});
