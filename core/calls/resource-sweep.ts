/**
 * What else a dead media-app node leaves besides its calls (node-sweep.ts calls this after it has
 * finalised them). Each resource is moved to a final state through its own guarded transition, and
 * its event is published once, so a sweep that runs twice (or races the node's own last writes)
 * changes nothing the second time:
 *
 *  - conferences hosted on the node: every participant leaves (leaved), a running recording ends and
 *    the host claim is dropped. A `conference` room stays progressing with no host: the next call to
 *    join it, on any node, hosts it again (re-hosted). `connect` and `queue` bridges live only with
 *    their calls: they are terminated;
 *  - queuecalls of the node or of its calls: abandoned (waiting ones) or done (in service);
 *  - groupcalls of the node: hangup;
 *  - transfers whose transferer or transferee call was on the node and not done: failed;
 *  - speakings and transcribes on its calls or on the conferences above: stopped / done;
 *  - AI calls on its calls: terminated.
 *
 * Media streams need nothing here: they are WebSockets relayed to the node (core/streams/relay.ts),
 * which close when it dies; their state lives in no table.
 */
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { Knex } from '../db/knex';
import type { EventPublisher } from '../events/bus';
import { publishResourceEvent, type EventType, type ResourcePayload } from '../events/catalogue';
import { clock } from '../clock';
import { EMPTY_UUID } from '../ids';
import { conferenceNodeKey } from '../conferences/commands';
import { publishConference, publishConferencecall } from '../conferences/events';
import { conferencesRepo, type ConferenceRow } from '../repos/conferences';
import { conferencecallsRepo, type ConferencecallRow } from '../repos/conferencecalls';
import { LIVE_QUEUECALL, queuecallsRepo, type QueuecallRow } from '../repos/queuecalls';
import { publishQueuecallStatus } from '../queues/events';
import { groupcallJson, groupcallsRepo } from '../repos/groupcalls';
import { speakingsRepo } from '../repos/speakings';
import { transcribeJson, transcribesRepo } from '../repos/transcribes';
import { AICALL_EVENT, aicallJson, aicallsRepo } from '../repos/ai-calls';

export interface ResourceSweepDeps {
  db: Knex;
  redis: Redis;
  keyPrefix: string;
  events: EventPublisher;
  logger: Logger;
}

export interface ResourceSweepReport {
  /** conferences terminated (connect, queue) */
  conferencesEnded: string[];
  /** conference rooms left without a host, to be hosted again by the next join */
  conferencesReleased: string[];
  conferencecalls: string[];
  queuecalls: string[];
  groupcalls: string[];
  transfers: string[];
  speakings: string[];
  transcribes: string[];
  aicalls: string[];
  recordings: string[];
}

const LIVE_CONFERENCE = ['starting', 'progressing', 'terminating'];
const LIVE_RECORDING = ['initiating', 'recording', 'stopping'];

export async function sweepResources(d: ResourceSweepDeps, nodeId: string, callIds: readonly string[]): Promise<ResourceSweepReport> {
  const r: ResourceSweepReport = {
    conferencesEnded: [],
    conferencesReleased: [],
    conferencecalls: [],
    queuecalls: [],
    groupcalls: [],
    transfers: [],
    speakings: [],
    transcribes: [],
    aicalls: [],
    recordings: [],
  };
  const warn = (what: string) => (err: Error) => d.logger.warn({ err: err.message, node: nodeId, what }, 'node sweep: event publish failed');
  const publish = (type: EventType, payload: ResourcePayload) => publishResourceEvent(d.events, type, payload).catch(warn(type));
  const s: Sweep = { d, nodeId, calls: [...callIds], r, warn, publish };
  const confIds = await sweepConferences(s);
  await sweepQueuecalls(s);
  await sweepGroupcalls(s);
  if (s.calls.length) await sweepCallTasks(s);
  await sweepMediaTasks(s, [...s.calls, ...confIds]);
  return r;
}

/** One sweep's inputs and report, shared by its steps. */
interface Sweep {
  d: ResourceSweepDeps;
  nodeId: string;
  calls: string[];
  r: ResourceSweepReport;
  warn: (what: string) => (err: Error) => void;
  publish: (type: EventType, payload: ResourcePayload) => Promise<unknown>;
}

/** Conferences hosted here, and participants that were calls of this node; the ids of the conferences. */
async function sweepConferences(s: Sweep): Promise<string[]> {
  const { d, r, warn } = s;
  const confs = await conferencesHostedHere(s);
  const confIds = confs.map((c) => c.id);
  const ccRepo = conferencecallsRepo(d.db);
  const ccs = (await d
    .db('conferencecalls')
    .whereIn('status', ['joining', 'joined', 'leaving'])
    .where((q) => {
      q.whereIn('conference_id', confIds.length ? confIds : [EMPTY_UUID]);
      if (s.calls.length) q.orWhereIn('reference_id', s.calls);
    })) as ConferencecallRow[];
  const confRepo = conferencesRepo(d.db);
  for (const cc of ccs) {
    const t = await ccRepo.transition(cc.id, 'leaved');
    if (!t.changed || !t.conferencecall) continue;
    r.conferencecalls.push(cc.id);
    await confRepo.removeCall(cc.conference_id, cc.id);
    await publishConferencecall(d.events, t.conferencecall).catch(warn('conferencecall'));
  }
  r.recordings.push(...(await endRecordings(d.db, confIds)));
  for (const c of confs) await endConference(s, c);
  return confIds;
}

// hosted here: the record says so, or a participant was one of its calls; a conference hosted by
// another node (its participant joined through a bridge leg, media-app/xnode/) is skipped
async function conferencesHostedHere({ d, nodeId, calls }: Sweep): Promise<ConferenceRow[]> {
  const joinedHere = calls.length
    ? ((await d.db('conferencecalls').whereIn('reference_id', calls).whereIn('status', ['joining', 'joined', 'leaving']).distinct().pluck('conference_id')) as string[])
    : [];
  const hosted = (await d
    .db('conferences')
    .whereIn('status', LIVE_CONFERENCE)
    .where((q) => {
      q.where({ node_id: nodeId });
      if (joinedHere.length) q.orWhereIn('id', joinedHere);
    })) as ConferenceRow[];
  const confs: ConferenceRow[] = [];
  for (const c of hosted) {
    const host = await d.redis.get(d.keyPrefix + conferenceNodeKey(c.id));
    if (host ? host !== nodeId : c.node_id !== nodeId) continue; // hosted elsewhere (again) since
    confs.push(c);
  }
  return confs;
}

/** A live conference room is released for the next join to claim; any other conference ends. */
async function endConference({ d, nodeId, r, warn }: Sweep, c: ConferenceRow): Promise<void> {
  if (c.type === 'conference' && c.status === 'progressing') {
    // the room outlives its host: the next join (any node) claims it again
    await d.redis.eval("if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end return 0", 1, d.keyPrefix + conferenceNodeKey(c.id), nodeId);
    const row = await d.db('conferences').where({ id: c.id, status: 'progressing' }).update({ recording_id: EMPTY_UUID, transcribe_id: EMPTY_UUID, tm_update: clock.now() }).returning('*');
    r.conferencesReleased.push(c.id);
    if (row[0]) await publishConference(d.events, 'conference_updated', row[0] as ConferenceRow).catch(warn('conference'));
    return;
  }
  const t = await conferencesRepo(d.db).transition(c.id, 'terminated');
  await d.redis.del(d.keyPrefix + conferenceNodeKey(c.id));
  if (t.changed && t.conference) {
    r.conferencesEnded.push(c.id);
    await publishConference(d.events, 'conference_updated', t.conference).catch(warn('conference'));
  }
}

/** Queuecalls of the node, or of its calls. */
async function sweepQueuecalls({ d, nodeId, calls, r }: Sweep): Promise<void> {
  const qcRepo = queuecallsRepo(d.db);
  const qcs = (await d
    .db('queuecalls')
    .whereIn('status', LIVE_QUEUECALL)
    .where((q) => {
      q.where({ node_id: nodeId });
      if (calls.length) q.orWhereIn('reference_id', calls);
    })) as QueuecallRow[];
  for (const qc of qcs) {
    const now = clock.now();
    const to = qc.status === 'service' || qc.status === 'kicking' ? 'done' : 'abandoned';
    const row = await qcRepo.transition(qc.id, to, { tm_end: now } as Partial<QueuecallRow>);
    if (!row) continue;
    r.queuecalls.push(qc.id);
    await publishQueuecallStatus(d.events, row);
  }
}

/** Groupcalls run by the node. */
async function sweepGroupcalls({ d, nodeId, r, publish }: Sweep): Promise<void> {
  const gcRepo = groupcallsRepo(d.db);
  for (const id of (await d.db('groupcalls').where({ node_id: nodeId }).whereNot({ status: 'hangup' }).pluck('id')) as string[]) {
    const t = await gcRepo.transition(id, 'hangup');
    if (!t.changed || !t.row) continue;
    r.groupcalls.push(id);
    await publish('groupcall_hangup', groupcallJson(t.row));
  }
}

/** Transfers and AI calls of the node's calls. */
async function sweepCallTasks({ d, calls, r, publish }: Sweep): Promise<void> {
  // transfers of its calls
  const open = (await d
    .db('transfers')
    .whereIn('status', ['initiating', 'consulting'])
    .where((q) => void q.whereIn('transferer_call_id', calls).orWhereIn('transferee_call_id', calls))
    .pluck('id')) as string[];
  for (const id of open) {
    const [row] = await d.db('transfers').where({ id }).whereIn('status', ['initiating', 'consulting']).update({ status: 'failed', tm_update: clock.now() }).returning('id');
    if (row) r.transfers.push(id);
  }

  // AI calls on its calls
  const aiRepo = aicallsRepo(d.db);
  for (const id of (await d.db('aicalls').whereIn('reference_id', calls).whereNot({ status: 'terminated' }).whereNull('tm_delete').pluck('id')) as string[]) {
    const row = await aiRepo.transition(id, 'terminated');
    if (!row) continue;
    r.aicalls.push(id);
    await publish(AICALL_EVENT.terminated as EventType, aicallJson(row));
  }
}

/** Speakings and transcribes on the node's calls and on the conferences it hosted. */
async function sweepMediaTasks({ d, r, publish }: Sweep, refs: string[]): Promise<void> {
  if (refs.length) {
    const sRepo = speakingsRepo(d.db);
    for (const id of (await d.db('speakings').whereIn('reference_id', refs).whereNot({ status: 'stopped' }).pluck('id')) as string[]) {
      const row = await sRepo.setStatus(id, 'stopped');
      if (row) r.speakings.push(id);
    }
    const trRepo = transcribesRepo(d.db);
    for (const id of (await d.db('transcribes').whereIn('reference_id', refs).where({ status: 'progressing' }).pluck('id')) as string[]) {
      const row = await trRepo.finish(id);
      if (!row) continue;
      r.transcribes.push(id);
      await publish('transcribe_done', transcribeJson(row));
    }
  }
}

/** Ends the live recordings of these references (conference recordings; call recordings are node-sweep.ts's). */
async function endRecordings(db: Knex, referenceIds: string[]): Promise<string[]> {
  if (!referenceIds.length) return [];
  const now = clock.now();
  const rows = (await db('recordings').whereIn('reference_id', referenceIds).whereIn('status', LIVE_RECORDING).update({ status: 'ended', tm_end: now, tm_update: now }).returning('id')) as {
    id: string;
  }[];
  return rows.map((x) => x.id);
}
