/**
 * ais (AI configurations) and ai_prompt_histories. Every init_prompt change (create, update, an
 * accepted proposal) writes a history entry in the same transaction and points
 * current_prompt_history_id at it. The vendor keys (engine_key, the keys in parameter) are stored
 * sealed (core/secrets/keys.ts) and shown masked; a row read holds them sealed.
 */
import { randomBytes } from 'node:crypto';
import type { Db } from '../db/knex';
import { clock } from '../clock';
import { EMPTY_UUID, newId } from '../ids';
import { formatLegacy } from '../time';
import { paginate, toPage, type Page, type PageParams } from '../pagination';
import { maskKey } from '../llm/endpoint';
import { maskedVoiceParameter, unmaskedVoiceParameter } from '../speech/voices';
import { maskedLlmParameter, refuseMovedFallbackKey, unmaskedLlmParameter } from '../llm/fallback';
import { engineKeyDestination, refuseMovedSecret } from '../secrets/key-destination';
import { openForShow, sealKey, sealParameter, mapParameterKeys } from '../secrets/keys';
import { aiVersionsRepo, openOrKeep, SYSTEM_CREATOR, type AiVersionCreator, type AiVersionRow } from './ai-versions';
import type { AiRow, PromptHistoryRow } from '../db/rows/ais';
export type { AiRow, PromptHistoryRow } from '../db/rows/ais';

export type AiInput = Partial<Omit<AiRow, 'id' | 'customer_id' | 'is_insight_active' | 'current_prompt_history_id' | 'direct_hash' | 'tm_create' | 'tm_update' | 'tm_delete'>>;

export function aiJson(a: AiRow) {
  return {
    id: a.id,
    customer_id: a.customer_id,
    name: a.name,
    detail: a.detail,
    type: a.type,
    is_insight_active: !!a.is_insight_active,
    engine_model: a.engine_model,
    engine_url: a.engine_url,
    engine_key: maskKey(openForShow(a.engine_key)),
    // an AI's own voice keys (parameter.tts_key, tts_fallback.tts_key; docs/ai.md "Voices") are shown masked
    parameter: maskedParameter(a.parameter),
    rag_id: a.rag_id ?? EMPTY_UUID,
    init_prompt: a.init_prompt,
    current_prompt_history_id: a.current_prompt_history_id ?? EMPTY_UUID,
    tts_type: a.tts_type,
    tts_voice_id: a.tts_voice_id,
    stt_type: a.stt_type,
    stt_language: a.stt_language,
    vad_config: a.vad_config,
    smart_turn_enabled: a.smart_turn_enabled,
    auto_aicall_audit_enabled: a.auto_aicall_audit_enabled,
    tool_names: a.tool_names,
    direct_hash: a.direct_hash,
    tm_create: formatLegacy(a.tm_create),
    tm_update: formatLegacy(a.tm_update),
    tm_delete: formatLegacy(a.tm_delete),
  };
}

/** A version as the API shows it: the configuration it had, its keys masked as aiJson masks them. */
export function aiVersionJson(v: AiVersionRow) {
  return {
    id: v.id,
    customer_id: v.customer_id,
    ai_id: v.ai_id,
    number: v.number,
    config: { ...v.config, rag_id: v.config.rag_id ?? EMPTY_UUID, engine_key: maskKey(openForShow(v.engine_key)), parameter: maskedParameter(v.parameter) },
    changed: v.changed,
    created_by: { type: v.creator_type, id: v.creator_id ?? EMPTY_UUID },
    tm_create: formatLegacy(v.tm_create),
  };
}

export function promptHistoryJson(h: PromptHistoryRow) {
  return { id: h.id, customer_id: h.customer_id, ai_id: h.ai_id, prompt: h.prompt, proposal_id: h.proposal_id, tm_create: formatLegacy(h.tm_create) };
}

export const newDirectHash = () => randomBytes(12).toString('hex');

/** A stored `parameter` as the API shows it: its sealed keys opened only to be masked. */
export function maskedParameter(p: Record<string, unknown>): Record<string, unknown> {
  const out = maskedLlmParameter(maskedVoiceParameter(mapParameterKeys(p, openForShow)));
  // a recogniser key (parameter.stt_key) is sealed and shown like the voice keys
  return typeof out.stt_key === 'string' ? { ...out, stt_key: maskKey(out.stt_key) } : out;
}

const JSON_COLS = ['parameter', 'vad_config', 'tool_names'] as const;
function encode(input: AiInput): Record<string, unknown> {
  const out: Record<string, unknown> = { ...input };
  // the vendor keys are sealed before they reach the database (docs/ai.md "Keys")
  if (typeof out.engine_key === 'string') out.engine_key = sealKey(out.engine_key);
  if (input.parameter !== undefined) out.parameter = sealParameter(input.parameter);
  for (const c of JSON_COLS) if (out[c] !== undefined) out[c] = JSON.stringify(out[c]);
  return out;
}

export function aisRepo(db: Db) {
  const live = (q: Db = db) => q('ais').whereNull('tm_delete');
  async function addHistory(trx: Db, ai: AiRow, proposalId: string): Promise<PromptHistoryRow> {
    const [h] = await trx('ai_prompt_histories')
      .insert({ id: newId(), customer_id: ai.customer_id, ai_id: ai.id, prompt: ai.init_prompt, proposal_id: proposalId, tm_create: clock.now() })
      .returning('*');
    await trx('ais')
      .where({ id: ai.id })
      .update({ current_prompt_history_id: (h as PromptHistoryRow).id });
    ai.current_prompt_history_id = (h as PromptHistoryRow).id;
    return h as PromptHistoryRow;
  }
  const repo = {
    /** Creates the AI with its version 1, made by `by`. */
    async create(customerId: string, input: AiInput, by: AiVersionCreator = SYSTEM_CREATOR): Promise<AiRow> {
      return db.transaction(async (trx) => {
        const [row] = await trx('ais')
          .insert({ ...encode(input), id: newId(), customer_id: customerId, direct_hash: newDirectHash(), tm_create: clock.now() })
          .returning('*');
        const ai = row as AiRow;
        await addHistory(trx, ai, EMPTY_UUID);
        await aiVersionsRepo(db).write(trx, null, ai, by);
        return ai;
      });
    },
    async get(customerId: string, id: string): Promise<AiRow | null> {
      return ((await live().where({ id, customer_id: customerId }).first()) as AiRow | undefined) ?? null;
    },
    async list(customerId: string, params: PageParams): Promise<Page<AiRow>> {
      return toPage(await paginate<AiRow>(live().where({ customer_id: customerId }).select('*'), params), (r) => r);
    },
    /**
     * Applies the patch; a changed init_prompt writes a history entry (with proposalId when accepting),
     * and any changed field the next version, made by `by`.
     */
    async update(customerId: string, id: string, patch: AiInput, proposalId = EMPTY_UUID, by: AiVersionCreator = SYSTEM_CREATOR): Promise<AiRow | null> {
      return db.transaction(async (trx) => {
        const before = (await live(trx).where({ id, customer_id: customerId }).forUpdate().first()) as AiRow | undefined;
        if (!before) return null;
        // an AI that stops being an Insight AI stops being the active one
        const demoted = patch.type !== undefined && patch.type !== 'insight' ? { is_insight_active: false } : {};
        // a key sent back as we show it (masked) is the stored key: a client that reads, edits and writes keeps it
        const maskedBack = patch.engine_key !== undefined && before.engine_key && patch.engine_key === maskKey(openForShow(before.engine_key));
        // ...as long as it goes where it went: a kept key does not follow a changed engine_url (core/secrets/key-destination.ts)
        refuseMovedSecret({
          field: 'engine_key',
          placeField: 'engine_url',
          stored: openOrKeep(before.engine_key ?? '') !== '',
          kept: patch.engine_key === undefined || !!maskedBack,
          before: engineKeyDestination(before.engine_model, before.engine_url),
          after: engineKeyDestination(patch.engine_model ?? before.engine_model, patch.engine_url ?? before.engine_url),
        });
        if (maskedBack) patch = { ...patch, engine_key: before.engine_key };
        if (patch.parameter) {
          // compared with the stored keys opened; a kept key is sealed again on the way back
          const stored = mapParameterKeys(before.parameter, openOrKeep);
          refuseMovedFallbackKey(patch.parameter, stored);
          const next = unmaskedLlmParameter(unmaskedVoiceParameter(patch.parameter, stored), stored);
          const kept = typeof next.stt_key === 'string' && typeof stored.stt_key === 'string' && stored.stt_key && next.stt_key === maskKey(stored.stt_key);
          patch = { ...patch, parameter: kept ? { ...next, stt_key: stored.stt_key } : next };
        }
        const [row] = await trx('ais')
          .where({ id })
          .update({ ...encode(patch), ...demoted, tm_update: clock.now() })
          .returning('*');
        const ai = row as AiRow;
        if (patch.init_prompt !== undefined && patch.init_prompt !== before.init_prompt) await addHistory(trx, ai, proposalId);
        await aiVersionsRepo(db).write(trx, before, ai, by);
        return ai;
      });
    },
    async regenerateDirectHash(customerId: string, id: string): Promise<AiRow | null> {
      const [row] = await live().where({ id, customer_id: customerId }).update({ direct_hash: newDirectHash(), tm_update: clock.now() }).returning('*');
      return (row as AiRow | undefined) ?? null;
    },
    /**
     * Makes `ai` the customer's active Insight AI, deactivating the one before (one transaction; the
     * unique index keeps it to one). The rows changed: the activated one first, then the deactivated.
     */
    async activateInsight(ai: AiRow): Promise<AiRow[]> {
      if (ai.is_insight_active) return [ai];
      return db.transaction(async (trx) => {
        const now = clock.now();
        const before = (await live(trx).where({ customer_id: ai.customer_id, is_insight_active: true }).update({ is_insight_active: false, tm_update: now }).returning('*')) as AiRow[];
        const [row] = await live(trx).where({ id: ai.id }).update({ is_insight_active: true, tm_update: now }).returning('*');
        return row ? [row as AiRow, ...before] : [];
      });
    },
    /** The Insight AI a case uses: the active one, else the most recently created Insight AI. */
    async insightFor(customerId: string): Promise<AiRow | null> {
      const row = await live()
        .where({ customer_id: customerId, type: 'insight' })
        .orderBy([
          { column: 'is_insight_active', order: 'desc' },
          { column: 'tm_create', order: 'desc' },
        ])
        .first();
      return (row as AiRow | undefined) ?? null;
    },
    /** Deletes the AI (tm_delete) and, in the same transaction, blanks the keys of its versions (docs/ai.md "Versions"). */
    async softDelete(customerId: string, id: string): Promise<AiRow | null> {
      return db.transaction(async (trx) => {
        const now = clock.now();
        const [row] = await live(trx).where({ id, customer_id: customerId }).update({ tm_delete: now, tm_update: now, is_insight_active: false }).returning('*');
        if (row) await aiVersionsRepo(db).withholdAll(trx, id);
        return (row as AiRow | undefined) ?? null;
      });
    },
    async histories(customerId: string, aiId: string, params: PageParams): Promise<Page<PromptHistoryRow>> {
      return toPage(await paginate<PromptHistoryRow>(db('ai_prompt_histories').where({ customer_id: customerId, ai_id: aiId }).select('*'), params), (r) => r);
    },
    async history(customerId: string, aiId: string, id: string): Promise<PromptHistoryRow | null> {
      return ((await db('ai_prompt_histories').where({ customer_id: customerId, ai_id: aiId, id }).first()) as PromptHistoryRow | undefined) ?? null;
    },
  };
  return repo;
}
