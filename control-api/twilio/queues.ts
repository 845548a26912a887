/**
 * Queues (list, fetch, create, update FriendlyName, delete) and Queues/{QU…}/Members (list, fetch by
 * CallSid or `Front`, update Url/Method: dequeue). A Queue is one of our queues (`QU` + its id); a
 * Member is one of its waiting queuecalls (initiating, waiting, connecting: not yet with an agent),
 * in the order they came. MaxSize (1–5000, default 1000 as Twilio's) is the queue's `max_size`: a
 * join beyond it is refused (<Enqueue>: QueueResult=queue-full); a /v1.0 queue has none (null).
 * Dequeue hands the waiting call's activeflow a `twiml` action (the `activeflow.redirect` command,
 * as Calls update does): the call leaves the queue (abandoned) and runs the TwiML at Url.
 */
import { Router, type Request, type Response } from 'express';
import type { AppContext } from '../context';
import { EMPTY_UUID } from '../../core/ids';
import { callsRepo } from '../../core/repos/calls';
import { queuesRepo, TWILIO_QUEUE_MAX_SIZE, type QueueRow } from '../../core/repos/queues';
import { queuecallsRepo, type QueuecallRow } from '../../core/repos/queuecalls';
import { twilioListsRepo } from '../../core/repos/twilio-lists';
import { generateDirectHash } from '../../core/extensions/credentials';
import { accountSid, callSid, fromSid, toSid } from '../../core/twilio/sids';
import { commandBus } from '../calls/bus';
import { authOf } from './auth';
import { API_VERSION } from './call-json';
import { twimlAction } from './calls';
import { badParam, notFound } from './errors';
import { int, one, pageJson, pageOf, rfc2822, type Params } from './params';

const NAME_MAX = 64;

const queueUri = (q: Pick<QueueRow, 'id' | 'customer_id'>) => `/${API_VERSION}/Accounts/${accountSid(q.customer_id)}/Queues/${toSid('QU', q.id)}`;

async function waitingOf(ctx: AppContext, queueId: string): Promise<QueuecallRow[]> {
  return queuecallsRepo(ctx.db).waitingIn(queueId);
}

const waitSeconds = (qc: QueuecallRow, now: number) => Math.max(0, Math.floor((now - qc.tm_create.getTime()) / 1000));

async function twilioQueueJson(ctx: AppContext, q: QueueRow) {
  const members = await waitingOf(ctx, q.id);
  const now = Date.now();
  const total = members.reduce((s, m) => s + waitSeconds(m, now), 0);
  const base = queueUri(q);
  return {
    sid: toSid('QU', q.id),
    account_sid: accountSid(q.customer_id),
    friendly_name: q.name,
    current_size: members.length,
    average_wait_time: members.length ? Math.round(total / members.length) : 0,
    max_size: q.max_size,
    date_created: rfc2822(q.tm_create),
    date_updated: rfc2822(q.tm_update ?? q.tm_create),
    uri: `${base}.json`,
    subresource_uris: { members: `${base}/Members.json` },
  };
}

function memberJson(q: QueueRow, qc: QueuecallRow, position: number, now: number) {
  return {
    call_sid: callSid(qc.reference_id),
    queue_sid: toSid('QU', q.id),
    date_enqueued: rfc2822(qc.tm_create),
    position,
    wait_time: waitSeconds(qc, now),
    uri: `${queueUri(q)}/Members/${callSid(qc.reference_id)}.json`,
  };
}

async function ownedQueue(ctx: AppContext, customerId: string, sid: string): Promise<QueueRow> {
  const id = fromSid('QU', sid);
  const q = id ? await queuesRepo(ctx.db).get(customerId, id) : null;
  if (!q) throw notFound(`Queue ${sid.slice(0, 40)}`);
  return q;
}

/** Twilio's MaxSize: the most callers that may wait in the queue. */
const MAX_SIZE_LIMIT = 5000;

function friendlyName(p: Params, required: boolean): string | undefined {
  const name = one(p, 'FriendlyName', NAME_MAX + 1);
  if (name !== undefined && (name.trim() === '' || name.length > NAME_MAX)) throw badParam(`FriendlyName must be 1 to ${NAME_MAX} characters`);
  if (required && name === undefined) throw badParam('FriendlyName is required', 20001);
  return name;
}

async function list(ctx: AppContext, req: Request, res: Response): Promise<void> {
  const auth = authOf(res.locals);
  const page = pageOf(req.query as Params);
  const rows = await twilioListsRepo(ctx.db).queues(auth.customerId, { offset: page.offset, limit: page.pageSize + 1 });
  res.json(pageJson(req, 'queues', page, await Promise.all(rows.map((q) => twilioQueueJson(ctx, q)))));
}

async function create(ctx: AppContext, req: Request, res: Response): Promise<void> {
  const auth = authOf(res.locals);
  const p = req.body as Params;
  const name = friendlyName(p, true)!;
  const maxSize = int(p, 'MaxSize', 1, MAX_SIZE_LIMIT) ?? TWILIO_QUEUE_MAX_SIZE;
  const q = await queuesRepo(ctx.db).create(auth.customerId, { name, routing_method: 'random', direct_hash: generateDirectHash(), max_size: maxSize });
  res.status(201).json(await twilioQueueJson(ctx, q));
}

async function update(ctx: AppContext, req: Request, res: Response): Promise<void> {
  const auth = authOf(res.locals);
  const q = await ownedQueue(ctx, auth.customerId, String(req.params.QueueSid));
  const p = req.body as Params;
  const name = friendlyName(p, false);
  const maxSize = int(p, 'MaxSize', 1, MAX_SIZE_LIMIT);
  const fields = { ...(name !== undefined ? { name } : {}), ...(maxSize !== undefined ? { max_size: maxSize } : {}) };
  if (!Object.keys(fields).length) res.json(await twilioQueueJson(ctx, q));
  else res.json(await twilioQueueJson(ctx, (await queuesRepo(ctx.db).update(auth.customerId, q.id, fields)) ?? q));
}

async function remove(ctx: AppContext, req: Request, res: Response): Promise<void> {
  const auth = authOf(res.locals);
  const q = await ownedQueue(ctx, auth.customerId, String(req.params.QueueSid));
  await queuesRepo(ctx.db).softDelete(auth.customerId, q.id);
  res.status(204).end();
}

/** The member `Front` or a CallSid names, with its 1-based position, or 20404. */
async function memberOf(ctx: AppContext, q: QueueRow, sid: string): Promise<{ qc: QueuecallRow; position: number }> {
  const waiting = await waitingOf(ctx, q.id);
  const callId = sid === 'Front' ? waiting[0]?.reference_id : fromSid('CA', sid);
  const i = callId ? waiting.findIndex((w) => w.reference_id === callId) : -1;
  if (i < 0) throw notFound(`Member ${sid.slice(0, 40)}`);
  return { qc: waiting[i]!, position: i + 1 };
}

async function members(ctx: AppContext, req: Request, res: Response): Promise<void> {
  const auth = authOf(res.locals);
  const q = await ownedQueue(ctx, auth.customerId, String(req.params.QueueSid));
  const page = pageOf(req.query as Params);
  const now = Date.now();
  const all = (await waitingOf(ctx, q.id)).map((qc, i) => memberJson(q, qc, i + 1, now));
  res.json(pageJson(req, 'queue_members', page, all.slice(page.offset, page.offset + page.pageSize + 1)));
}

async function dequeue(ctx: AppContext, req: Request, res: Response): Promise<void> {
  const auth = authOf(res.locals);
  const p = req.body as Params;
  const q = await ownedQueue(ctx, auth.customerId, String(req.params.QueueSid));
  const { qc, position } = await memberOf(ctx, q, String(req.params.CallSid));
  if (p.Twiml !== undefined) throw badParam('Twiml is not a Member parameter: give Url');
  const action = twimlAction(ctx, p);
  if (!action) throw badParam('Url is required', 21205);
  const call = await callsRepo(ctx.db).getOwned(auth.customerId, qc.reference_id);
  const activeflowId = qc.reference_activeflow_id !== EMPTY_UUID ? qc.reference_activeflow_id : (call?.activeflow_id ?? EMPTY_UUID);
  if (!call || call.status !== 'progressing' || activeflowId === EMPTY_UUID) throw badParam('Member is not waiting: its call is not in progress');
  const bus = commandBus(ctx);
  const node = (await bus.activeflowOwner(activeflowId)) ?? (await bus.callOwner(call.id));
  if (!node) throw badParam('Member is not waiting on a live node');
  await bus.toNode(node, { type: 'activeflow.redirect', activeflowId, actions: [action] });
  res.json(memberJson(q, qc, position, Date.now()));
}

type Handler = (ctx: AppContext, req: Request, res: Response) => Promise<void>;

export function queuesRouter(ctx: AppContext): Router {
  const r = Router({ mergeParams: true });
  const h = (fn: Handler) => (req: Request, res: Response, next: (e?: unknown) => void) => void fn(ctx, req, res).catch(next);
  const owned = (c: AppContext, req: Request, res: Response) => ownedQueue(c, authOf(res.locals).customerId, String(req.params.QueueSid));
  r.get('/Queues{.json}', h(list));
  r.post('/Queues{.json}', h(create));
  r.get(
    '/Queues/:QueueSid.json',
    h(async (c, req, res) => void res.json(await twilioQueueJson(c, await owned(c, req, res)))),
  );
  r.post('/Queues/:QueueSid.json', h(update));
  r.delete('/Queues/:QueueSid.json', h(remove));
  r.get('/Queues/:QueueSid/Members{.json}', h(members));
  r.get(
    '/Queues/:QueueSid/Members/:CallSid.json',
    h(async (c, req, res) => {
      const q = await owned(c, req, res);
      const m = await memberOf(c, q, String(req.params.CallSid));
      res.json(memberJson(q, m.qc, m.position, Date.now()));
    }),
  );
  r.post('/Queues/:QueueSid/Members/:CallSid.json', h(dequeue));
  return r;
}
