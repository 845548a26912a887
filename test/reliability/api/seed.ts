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

export async function seedResources(t: TestApp, f: Fixture): Promise<{ failed: string[] }> {
  const failed: string[] = [];
  const rnd = Math.random().toString(36).slice(2, 8);
  const post = async (path: string, body: object): Promise<Json> => {
    const r = await request(t.app).post(`/v1.0${path}`).set('Authorization', `Bearer ${f.token}`).send(body);
    if (r.status >= 300) failed.push(`POST ${path}: ${r.status} ${JSON.stringify(r.body).slice(0, 160)}`);
    return r.body ?? {};
  };
  const step = async (name: string, fn: () => Promise<unknown>) => {
    try {
      await fn();
    } catch (e) {
      failed.push(`${name}: ${(e as Error).message.slice(0, 160)}`);
    }
  };
  const db = t.ctx.db;
  const cid = f.customer.id;

  await step('billing', async () => addBalance(db, (await ensureBillingAccount(db, cid)).id, 10_000_000, `iso:${cid}`));
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
    await post(path, body);
  const contact = await post('/contacts', { first_name: 'iso' });
  await post('/contact_addresses', { contact_id: contact.id, type: 'tel', target: '+15550100001' });
  // an engine_url (never called) lets an aicall be created without an LLM on the server
  const ai = await post('/ais', { name: 'iso', engine_url: 'http://127.0.0.1:9/v1' });
  const member = newId();
  await post('/teams', { name: 'iso', start_member_id: member, members: [{ id: member, name: 'first', ai_id: ai.id }] });
  const aicall = await post('/aicalls', { assistance_type: 'ai', assistance_id: ai.id, reference_type: '' });
  if (aicall.id) await post('/aimessages', { aicall_id: aicall.id, role: 'user', content: 'hi' });
  const widget = await post('/webchat_widgets', { name: 'iso' });
  const session = await post('/webchat_sessions', { widget_id: widget.id });
  await post('/webchat_messages', { session_id: session.id, text: 'hi' });
  const outplan = await post('/outplans', { source: { type: 'tel', target: '+15550100000' } });
  const outdial = await post('/outdials', { name: 'iso' });
  const campaign = await post('/campaigns', { service_level: 1, outplan_id: outplan.id, outdial_id: outdial.id, type: 'call', actions: [{ type: 'hangup' }] });
  await post('/emails', { destinations: [{ type: 'email', target: 'iso@example.test' }], subject: 's', content: 'c', attachments: [] });
  await step('number', async () => {
    const av = await request(t.app).get('/v1.0/available_numbers').query({ type: 'virtual' }).set('Authorization', `Bearer ${f.token}`);
    await post('/numbers', { number: av.body.result[0].number });
  });
  const sip = { source: { type: 'sip', target: 'a@example.test' }, destinations: [{ type: 'sip', target: 'sip:b@127.0.0.1:9' }], actions: [{ type: 'answer' }] };
  const call = (await post('/calls', sip)).calls?.[0] as Json | undefined;
  await post('/groupcalls', { ...sip, ring_method: 'ring_all', answer_method: 'hangup_others' });
  const callId = call?.id ?? newId();
  const queue = (await request(t.app).get('/v1.0/queues').set('Authorization', `Bearer ${f.token}`)).body.result?.[0];
  const conf = (await request(t.app).get('/v1.0/conferences').set('Authorization', `Bearer ${f.token}`)).body.result?.[0];

  // resources that only live calls make: straight into the tables, owned by the customer
  await step('queuecall', () => queuecallsRepo(db).create({ customer_id: cid, queue_id: queue.id, reference_id: callId }));
  await step('conferencecall', () => conferencecallsRepo(db).create({ customer_id: cid, conference_id: conf.id, reference_id: callId }));
  await step('speaking', () =>
    speakingsRepo(db).create({ customer_id: cid, reference_type: 'call', reference_id: callId, language: 'en-US', provider: 'espeak', voice_id: '', direction: 'out' } as never),
  );
  await step('transcribe', () =>
    transcribesRepo(db).create({ customer_id: cid, reference_type: 'call', reference_id: callId, language: 'en-US', direction: 'both', provider: 'pocketsphinx' } as never),
  );
  await step('summary', () => summariesRepo(db).create(cid, { reference_type: 'call', reference_id: callId, language: 'en-US' } as never));
  await step('contact_case', () => contactCasesRepo(db).create({ customer_id: cid, reference_type: 'call', reference_id: callId }));
  await step('recording', () =>
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
  await step('campaigncall', () =>
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
  return { failed };
}
