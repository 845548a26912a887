/**
 * aicalls (one AI session on a call, a conversation or a task) and aimessages (its turns).
 * Statuses: initiating → progressing → (pausing → resuming →) terminating → terminated; each change
 * is guarded in SQL so a repeated transition changes nothing.
 */
import type { Db } from '../db/knex';
import { clock } from '../clock';
import { EMPTY_UUID, newId } from '../ids';
import { formatLegacy } from '../time';
import { paginate, toPage, type Page, type PageParams } from '../pagination';
import { maskedParameter } from './ais';
import { sealParameter } from '../secrets/keys';
import { AICALL_STATUSES, type AicallRow, type AicallStatus, type AimessageRow } from '../db/rows/ai-calls';
export { AICALL_STATUSES, type AicallRow, type AicallStatus, type AimessageRow } from '../db/rows/ai-calls';
export const isAicallStatus = (s: string): s is AicallStatus => (AICALL_STATUSES as readonly string[]).includes(s);

/** Event type of each status (the catalogue spells the first one "initializing"). */
export const AICALL_EVENT: Record<AicallStatus, string> = {
  initiating: 'aicall_status_initializing',
  progressing: 'aicall_status_progressing',
  pausing: 'aicall_status_pausing',
  resuming: 'aicall_status_resuming',
  terminating: 'aicall_status_terminating',
  terminated: 'aicall_status_terminated',
};

const ALLOWED_FROM: Record<AicallStatus, AicallStatus[]> = {
  initiating: [],
  progressing: ['initiating', 'resuming'],
  pausing: ['progressing'],
  resuming: ['pausing'],
  terminating: ['initiating', 'progressing', 'pausing', 'resuming'],
  terminated: ['initiating', 'progressing', 'pausing', 'resuming', 'terminating'],
};

const u = (v: string | null) => v ?? EMPTY_UUID;

export function aicallJson(c: AicallRow) {
  return {
    id: c.id,
    customer_id: c.customer_id,
    assistance_type: c.assistance_type,
    assistance_id: c.assistance_id,
    ai_engine_model: c.ai_engine_model,
    ai_tts_type: c.ai_tts_type,
    ai_tts_voice_id: c.ai_tts_voice_id,
    ai_stt_type: c.ai_stt_type,
    ai_vad_config: c.ai_vad_config,
    ai_smart_turn_enabled: c.ai_smart_turn_enabled,
    // a copy of the AI's (or team's) parameter: its voice keys masked as in the AI's JSON
    parameter: maskedParameter(c.parameter),
    activeflow_id: u(c.activeflow_id),
    reference_type: c.reference_type,
    reference_id: u(c.reference_id),
    confbridge_id: u(c.confbridge_id),
    current_member_id: u(c.current_member_id),
    status: c.status,
    stt_language: c.stt_language,
    metadata: c.metadata,
    tm_end: formatLegacy(c.tm_end),
    tm_create: formatLegacy(c.tm_create),
    tm_update: formatLegacy(c.tm_update),
    tm_delete: formatLegacy(c.tm_delete),
  };
}

export function aimessageJson(m: AimessageRow) {
  return {
    id: m.id,
    customer_id: m.customer_id,
    aicall_id: m.aicall_id,
    activeflow_id: u(m.activeflow_id),
    active_ai_id: u(m.active_ai_id),
    role: m.role,
    content: m.content,
    direction: m.direction,
    tool_calls: m.tool_calls,
    tool_call_id: m.tool_call_id,
    metadata: m.metadata ?? {},
    tm_create: formatLegacy(m.tm_create),
  };
}

export type AicallInput = Pick<AicallRow, 'assistance_type' | 'assistance_id' | 'reference_type'> &
  Partial<
    Pick<AicallRow, 'ai_engine_model' | 'ai_tts_type' | 'ai_tts_voice_id' | 'ai_stt_type' | 'ai_vad_config' | 'parameter' | 'activeflow_id' | 'reference_id' | 'current_member_id' | 'stt_language'>
  >;

/** One AI's part in one AI call: the call's own AI, or a team member that answered in it. */
export interface ParticipantRow {
  id: string;
  ai_id: string;
  aicall_id: string;
  tm_create: Date;
}

export function participantJson(p: ParticipantRow) {
  return { ai_id: p.ai_id, aicall_id: p.aicall_id, tm_create: formatLegacy(p.tm_create) };
}

export function aicallsRepo(db: Db) {
  const live = () => db('aicalls').whereNull('tm_delete');
  return {
    /**
     * A new aicall, `initiating`; or already `progressing` (`progressing: true`: a session that starts
     * at once, written in one statement instead of an insert and its first transition).
     */
    async create(customerId: string, input: AicallInput, opts: { progressing?: boolean } = {}): Promise<AicallRow> {
      const now = clock.now();
      const row: Record<string, unknown> = { ...input, id: newId(), customer_id: customerId, status: 'initiating', tm_create: now };
      if (opts.progressing) Object.assign(row, { status: 'progressing', tm_update: now });
      // a copy of the AI's parameter: its vendor keys stay sealed (an unsealed one is sealed here)
      if (input.parameter !== undefined) row.parameter = sealParameter(input.parameter);
      for (const k of ['ai_vad_config', 'parameter'] as const) if (row[k] !== undefined) row[k] = JSON.stringify(row[k]);
      const [r] = await db('aicalls').insert(row).returning('*');
      return r as AicallRow;
    },
    async get(customerId: string, id: string): Promise<AicallRow | null> {
      return ((await live().where({ id, customer_id: customerId }).first()) as AicallRow | undefined) ?? null;
    },
    async getById(id: string): Promise<AicallRow | null> {
      return ((await live().where({ id }).first()) as AicallRow | undefined) ?? null;
    },
    async list(customerId: string, params: PageParams): Promise<Page<AicallRow>> {
      return toPage(await paginate<AicallRow>(live().where({ customer_id: customerId }).select('*'), params), (r) => r);
    },
    /** Moves to `to` when allowed from the current status; null when nothing changed. */
    async transition(id: string, to: AicallStatus, extra: Partial<AicallRow> = {}): Promise<AicallRow | null> {
      const patch: Record<string, unknown> = { ...extra, status: to, tm_update: clock.now() };
      if (to === 'terminated') patch.tm_end = clock.now();
      const [r] = await live().where({ id }).whereIn('status', ALLOWED_FROM[to]).update(patch).returning('*');
      return (r as AicallRow | undefined) ?? null;
    },
    async setMember(id: string, memberId: string): Promise<void> {
      await db('aicalls').where({ id }).update({ current_member_id: memberId, tm_update: clock.now() });
    },
    /**
     * Participations of live AI calls of the customer, newest first: the AI an aicall was started
     * with (from the call's start) and every AI that answered in it (aimessages.active_ai_id, from
     * its first message). `by` names what the page runs over (its rows are keyed by the other id).
     */
    async participants(customerId: string, by: { aiId: string } | { aicallId: string }, params: PageParams): Promise<Page<ParticipantRow>> {
      const direct = db('aicalls').where({ customer_id: customerId, assistance_type: 'ai' }).whereNull('tm_delete').select({ aicall_id: 'id', ai_id: 'assistance_id', tm: 'tm_create' });
      const answered = db('aimessages as m')
        .join('aicalls as c', 'c.id', 'm.aicall_id')
        .whereNull('c.tm_delete')
        .where('m.customer_id', customerId)
        .whereNotNull('m.active_ai_id')
        .select({ aicall_id: 'm.aicall_id', ai_id: 'm.active_ai_id', tm: 'm.tm_create' });
      const grouped = db
        .from(db.raw('(? UNION ALL ?) as u', [direct, answered]))
        .groupBy('aicall_id', 'ai_id')
        .select('aicall_id', 'ai_id', db.raw('min(tm) as tm_create'));
      if ('aiId' in by) grouped.where('ai_id', by.aiId);
      else grouped.where('aicall_id', by.aicallId);
      const keyed = db.from(grouped.as('p')).select('p.aicall_id', 'p.ai_id', 'p.tm_create', db.raw(`${'aiId' in by ? 'p.aicall_id' : 'p.ai_id'} as id`));
      return toPage(await paginate<ParticipantRow>(db.from(keyed.as('q')).select('q.*'), params, 'q'), (r) => r);
    },
    async softDelete(customerId: string, id: string): Promise<AicallRow | null> {
      const now = clock.now();
      const [r] = await live().where({ id, customer_id: customerId }).update({ tm_delete: now, tm_update: now }).returning('*');
      return (r as AicallRow | undefined) ?? null;
    },
    async addMessage(
      m: Omit<AimessageRow, 'id' | 'tm_create' | 'tm_delete' | 'tool_calls' | 'tool_call_id' | 'activeflow_id' | 'active_ai_id' | 'metadata'> & Partial<AimessageRow>,
    ): Promise<AimessageRow> {
      const [r] = await db('aimessages')
        .insert({ ...m, tool_calls: JSON.stringify(m.tool_calls ?? []), metadata: JSON.stringify(m.metadata ?? {}), id: newId(), tm_create: clock.now() })
        .returning('*');
      return r as AimessageRow;
    },
    /** Merges `patch` into messages' metadata (a turn's latency, known once its audio went out). */
    async mergeMessageMetadata(ids: string[], patch: Record<string, unknown>): Promise<AimessageRow[]> {
      if (!ids.length) return [];
      return (await db('aimessages')
        .whereIn('id', ids)
        .update({ metadata: db.raw('metadata || ?::jsonb', [JSON.stringify(patch)]) })
        .returning('*')) as AimessageRow[];
    },
    async messages(customerId: string, params: PageParams, aicallId?: string): Promise<Page<AimessageRow>> {
      const q = db('aimessages').whereNull('tm_delete').where({ customer_id: customerId });
      if (aicallId) q.where({ aicall_id: aicallId });
      return toPage(await paginate<AimessageRow>(q.select('*'), params), (r) => r);
    },
    /** All messages of an AI call, oldest first (the conversation so far). */
    async history(aicallId: string): Promise<AimessageRow[]> {
      return (await db('aimessages')
        .whereNull('tm_delete')
        .where({ aicall_id: aicallId })
        .orderBy([{ column: 'tm_create' }, { column: 'id' }])) as AimessageRow[];
    },
    async message(customerId: string, id: string): Promise<AimessageRow | null> {
      return ((await db('aimessages').whereNull('tm_delete').where({ customer_id: customerId, id }).first()) as AimessageRow | undefined) ?? null;
    },
    async deleteMessage(customerId: string, id: string): Promise<AimessageRow | null> {
      const [r] = await db('aimessages').whereNull('tm_delete').where({ customer_id: customerId, id }).update({ tm_delete: clock.now() }).returning('*');
      return (r as AimessageRow | undefined) ?? null;
    },
  };
}
