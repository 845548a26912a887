// Real resources of one customer for the isolation battery: through the API where a plain body
// creates them, through the repos where they only arise from live calls (recordings, queuecalls,
// speakings...). Every step is tried; what could not be made is returned, so a test can tell.
import request from 'supertest';
import type { TestApp, Fixture } from '../../../testkit/api';
import { EMPTY_UUID, newId } from '../../../core/ids';
import { addBalance, ensureBillingAccount } from '../../../core/billing';
import { queuecallsRepo } from '../../../core/repos/queuecalls';
import { conferencecallsRepo } from '../../../core/repos/conferencecalls';
import { speakingsRepo } from '../../../core/repos/speakings';
import { transcribesRepo } from '../../../core/repos/transcribes';
import { summariesRepo } from '../../../core/repos/summaries';
import { contactCasesRepo } from '../../../core/repos/contact-cases';
import { campaigncallsRepo } from '../../../core/repos/campaigncalls';
import { clock } from '../../../core/clock';

type Json = Record<string, any>;

/** What every step shares: the app and the customer's token, and the list of what could not be made. */
class Seeder {
  readonly failed: string[] = [];
  readonly rnd = Math.random().toString(36).slice(2, 8);

  constructor(
    readonly t: TestApp,
    readonly f: Fixture,
  ) {}

  get db() {
    return this.t.ctx.db;
  }

  get cid(): string {
    return this.f.customer.id;
  }

  async post(path: string, body: object): Promise<Json> {
    const r = await request(this.t.app).post(`/v1.0${path}`).set('Authorization', `Bearer ${this.f.token}`).send(body);
    if (r.status >= 300) this.failed.push(`POST ${path}: ${r.status} ${JSON.stringify(r.body).slice(0, 160)}`);
    return r.body ?? {};
  }

  async get(path: string, query: object = {}): Promise<Json> {
    return (await request(this.t.app).get(`/v1.0${path}`).query(query).set('Authorization', `Bearer ${this.f.token}`)).body;
  }

  async step(name: string, fn: () => Promise<unknown>): Promise<void> {
    try {
      await fn();
    } catch (e) {
      this.failed.push(`${name}: ${(e as Error).message.slice(0, 160)}`);
    }
  }
}

export async function seedResources(t: TestApp, f: Fixture): Promise<{ failed: string[] }> {
  const s = new Seeder(t, f);
  await s.step('billing', async () => addBalance(s.db, (await ensureBillingAccount(s.db, s.cid)).id, 10_000_000, `iso:${s.cid}`));
  await plainResources(s);
  await aiResources(s);
  await workspaceResources(s);
  const dialer = await dialerResources(s);
  const call = await callResources(s);
  await liveCallRows(s, call, dialer);
  return { failed: s.failed };
}

/** The resources a plain body creates, with no other resource to name. */
async function plainResources(s: Seeder): Promise<void> {
  const { rnd } = s;
  for (const [path, body] of [
    ['/flows', { name: 'iso', actions: [{ type: 'hangup' }] }],
    ['/tags', { name: 'iso' }],
    ['/accesskeys', { name: 'iso' }],
    ['/queues', { name: 'iso' }],
    ['/rags', { name: 'iso' }],
    ['/extensions', { extension: `iso${rnd}`, password: 'Secret12345x' }],
    ['/trunks', { domain_name: `iso${rnd}`, auth_types: ['basic'], username: `u${rnd}`, password: 'Secret12345x' }],
    ['/conversation_accounts', { type: 'line', name: 'iso', detail: '', secret: 'x', token: 'y' }],
    ['/conferences', { type: 'conference' }],
    ['/activeflows', { actions: [{ type: 'answer' }] }],
  ] as const)
    await s.post(path, body);
  const contact = await s.post('/contacts', { first_name: 'iso' });
  await s.post('/contact_addresses', { contact_id: contact.id, type: 'tel', target: '+15550100001' });
}

/** An AI, its team, an AI call with a message. */
async function aiResources(s: Seeder): Promise<void> {
  // an engine_url (never called) lets an aicall be created without an LLM on the server
  const ai = await s.post('/ais', { name: 'iso', engine_url: 'http://127.0.0.1:9/v1' });
  const member = newId();
  await s.post('/teams', { name: 'iso', start_member_id: member, members: [{ id: member, name: 'first', ai_id: ai.id }] });
  const aicall = await s.post('/aicalls', { assistance_type: 'ai', assistance_id: ai.id, reference_type: '' });
  if (aicall.id) await s.post('/aimessages', { aicall_id: aicall.id, role: 'user', content: 'hi' });
}

/** A webchat widget with a session and a message. */
async function workspaceResources(s: Seeder): Promise<void> {
  const widget = await s.post('/webchat_widgets', { name: 'iso' });
  const session = await s.post('/webchat_sessions', { widget_id: widget.id });
  await s.post('/webchat_messages', { session_id: session.id, text: 'hi' });
}

type Dialer = { outplan: Json; outdial: Json; campaign: Json };

/** An outplan, an outdial and a campaign dialling them; an email; a number. */
async function dialerResources(s: Seeder): Promise<Dialer> {
  const outplan = await s.post('/outplans', { source: { type: 'tel', target: '+15550100000' } });
  const outdial = await s.post('/outdials', { name: 'iso' });
  const campaign = await s.post('/campaigns', { service_level: 1, outplan_id: outplan.id, outdial_id: outdial.id, type: 'call', actions: [{ type: 'hangup' }] });
  await s.post('/emails', { destinations: [{ type: 'email', target: 'iso@example.test' }], subject: 's', content: 'c', attachments: [] });
  await s.step('number', async () => {
    const av = await s.get('/available_numbers', { type: 'virtual' });
    await s.post('/numbers', { number: av.result[0].number });
  });
  return { outplan, outdial, campaign };
}

type CallRefs = { callId: string; queue: Json; conf: Json };

/** A call and a groupcall; the call (or an id standing for one) and the queue and conference the live rows name. */
async function callResources(s: Seeder): Promise<CallRefs> {
  const sip = { source: { type: 'sip', target: 'a@example.test' }, destinations: [{ type: 'sip', target: 'sip:b@127.0.0.1:9' }], actions: [{ type: 'answer' }] };
  const call = (await s.post('/calls', sip)).calls?.[0] as Json | undefined;
  await s.post('/groupcalls', { ...sip, ring_method: 'ring_all', answer_method: 'hangup_others' });
  const queue = (await s.get('/queues')).result?.[0];
  const conf = (await s.get('/conferences')).result?.[0];
  return { callId: call?.id ?? newId(), queue, conf };
}

/** Resources that only live calls make: straight into the tables, owned by the customer. */
async function liveCallRows(s: Seeder, { callId, queue, conf }: CallRefs, { outplan, outdial, campaign }: Dialer): Promise<void> {
  const { db, cid } = s;
  await s.step('queuecall', () => queuecallsRepo(db).create({ customer_id: cid, queue_id: queue.id, reference_id: callId }));
  await s.step('conferencecall', () => conferencecallsRepo(db).create({ customer_id: cid, conference_id: conf.id, reference_id: callId }));
  await s.step('speaking', () =>
    speakingsRepo(db).create({ customer_id: cid, reference_type: 'call', reference_id: callId, language: 'en-US', provider: 'espeak', voice_id: '', direction: 'out' } as never),
  );
  await s.step('transcribe', () =>
    transcribesRepo(db).create({ customer_id: cid, reference_type: 'call', reference_id: callId, language: 'en-US', direction: 'both', provider: 'pocketsphinx' } as never),
  );
  await s.step('summary', () => summariesRepo(db).create(cid, { reference_type: 'call', reference_id: callId, language: 'en-US' } as never));
  await s.step('contact_case', () => contactCasesRepo(db).create({ customer_id: cid, reference_type: 'call', reference_id: callId }));
  await s.step('recording', () =>
    db('recordings').insert({
      id: newId(),
      customer_id: cid,
      owner_id: EMPTY_UUID,
      owner_type: '',
      activeflow_id: EMPTY_UUID,
      reference_type: 'call',
      reference_id: callId,
      status: 'ended',
      format: 'wav',
      on_end_flow_id: EMPTY_UUID,
      options: '{}',
      filenames: [],
      tm_create: clock.now(),
    }),
  );
  await s.step('campaigncall', () =>
    campaigncallsRepo(db).create({
      id: newId(),
      customer_id: cid,
      campaign_id: campaign.id,
      outplan_id: outplan.id,
      outdial_id: outdial.id,
      outdial_target_id: EMPTY_UUID,
      queue_id: EMPTY_UUID,
      activeflow_id: EMPTY_UUID,
      flow_id: EMPTY_UUID,
      reference_type: 'call',
      reference_id: callId,
      status: 'done',
      result: 'success',
      source: { type: 'tel', target: '+15550100000' },
      destination: { type: 'tel', target: '+15550100003' },
      destination_index: 0,
      try_count: 1,
    } as never),
  );
}
