/**
 * What one service agent may read (control-api/service-agents/scope.ts says why): its calls (owned by
 * it, or with it as source or destination address), its conversations, its extension addresses, the
 * transcribes, transcripts, AI calls and messages hanging off those calls and conversations, its
 * contact cases and the open unowned ones, and its own stored files. Every read is scoped here, so a
 * route cannot forget the agent's reach.
 */
import type { Db, Knex } from '../db/knex';
import { EMPTY_UUID } from '../ids';
import { paginate, type PageParams } from '../pagination';
import type { CallRow } from './calls';
import type { ExtensionRow } from './extensions';
import type { TranscribeRow } from './transcribes';
import type { TranscriptRow } from './transcripts';
import { isAicallStatus, type AicallRow, type AimessageRow } from './ai-calls';
import type { CaseStatus, ContactCaseRow } from './contact-cases';
import type { StorageFileRow } from './storage';

export interface AgentScope {
  customerId: string;
  agentId: string;
}

/** One page of rows and the cursor of the next (core/pagination.ts). */
export interface RowPage<Row> {
  rows: Row[];
  nextPageToken: string;
}

/** The calls an agent sees, as a where-clause on a query over `calls`. */
export function callsOfAgent(q: Knex.QueryBuilder, s: AgentScope): Knex.QueryBuilder {
  return q.where({ customer_id: s.customerId }).where((w) => {
    w.where({ owner_type: 'agent', owner_id: s.agentId })
      .orWhereRaw(`(source->>'type' = 'agent' and lower(source->>'target') = ?)`, [s.agentId])
      .orWhereRaw(`(destination->>'type' = 'agent' and lower(destination->>'target') = ?)`, [s.agentId]);
  });
}

export function agentReachRepo(db: Db, s: AgentScope) {
  /** Ids of the agent's calls, as a subquery. */
  const callIds = () => callsOfAgent(db('calls').select('id'), s);
  /** Ids of the agent's live conversations, as a subquery. */
  const conversationIds = () => db('conversations').select('id').where({ customer_id: s.customerId, owner_id: s.agentId }).whereNull('tm_delete');
  const extensionsOf = (numbers: string[]) => db('extensions').where({ customer_id: s.customerId }).whereIn('extension', numbers).whereNull('tm_delete');
  const ownFiles = () => db('storage_files').where({ customer_id: s.customerId, owner_type: 'agent', owner_id: s.agentId }).whereNull('tm_delete');

  return {
    /** The subqueries peer events are filtered by: the agent's calls and conversations (deleted ones too). */
    peerReach(): { callIds: Knex.QueryBuilder; conversationIds: Knex.QueryBuilder } {
      return { callIds: callIds(), conversationIds: db('conversations').select('id').where({ customer_id: s.customerId, owner_id: s.agentId }) };
    },
    calls(page: PageParams): Promise<RowPage<CallRow>> {
      return paginate<CallRow>(callsOfAgent(db('calls').whereNull('tm_delete').select('*'), s), page);
    },
    /** The live extensions among `numbers` (the agent's extension addresses). */
    async extensions(numbers: string[]): Promise<ExtensionRow[]> {
      return (await extensionsOf(numbers).select('*')) as ExtensionRow[];
    },
    extensionPage(numbers: string[], page: PageParams): Promise<RowPage<ExtensionRow>> {
      return paginate<ExtensionRow>(extensionsOf(numbers).select('*'), page);
    },
    async extension(numbers: string[], id: string): Promise<ExtensionRow | undefined> {
      return (await extensionsOf(numbers).where({ id }).first()) as ExtensionRow | undefined;
    },
    /** Live transcribes of the agent's calls (of one call with `referenceId`). */
    transcribes(page: PageParams, referenceId?: string): Promise<RowPage<TranscribeRow>> {
      const q = db('transcribes').where({ customer_id: s.customerId, reference_type: 'call' }).whereIn('reference_id', callIds()).whereNull('tm_delete').select('*');
      if (referenceId) q.where({ reference_id: referenceId });
      return paginate<TranscribeRow>(q, page);
    },
    /** The id of a transcribe of one of the agent's calls. */
    async transcribeId(id: string): Promise<string | undefined> {
      const t = (await db('transcribes').where({ id, customer_id: s.customerId, reference_type: 'call' }).whereIn('reference_id', callIds()).first('id')) as { id: string } | undefined;
      return t?.id;
    },
    /** The lines of a transcribe (its id from `transcribeId`). */
    transcripts(transcribeId: string, page: PageParams): Promise<RowPage<TranscriptRow>> {
      return paginate<TranscriptRow>(db('transcripts').where({ transcribe_id: transcribeId }).select('*'), page);
    },
    /** Live AI calls on the agent's calls and conversations. */
    aicalls(page: PageParams, filter: { reference_type?: string; reference_id?: string; status?: string }): Promise<RowPage<AicallRow>> {
      const q = db('aicalls').where({ customer_id: s.customerId }).whereNull('tm_delete').select('*');
      q.where(
        (w) =>
          void w
            .where((c) => void c.where({ reference_type: 'call' }).whereIn('reference_id', callIds()))
            .orWhere((c) => void c.where({ reference_type: 'conversation' }).whereIn('reference_id', conversationIds())),
      );
      if (filter.reference_type) q.where({ reference_type: filter.reference_type });
      if (filter.reference_id) q.where({ reference_id: filter.reference_id });
      // a status no AI call can have matches none (the filter is free text)
      if (filter.status && isAicallStatus(filter.status)) q.where({ status: filter.status });
      else if (filter.status) q.whereRaw('false');
      return paginate<AicallRow>(q, page);
    },
    /** The id of a live AI call on one of the agent's calls or conversations. */
    async aicallId(id: string): Promise<string | undefined> {
      const a = (await db('aicalls')
        .where({ id, customer_id: s.customerId })
        .whereNull('tm_delete')
        .where((w) => void w.whereIn('reference_id', callIds()).orWhereIn('reference_id', conversationIds()))
        .first('id')) as { id: string } | undefined;
      return a?.id;
    },
    /** The live messages of an AI call (its id from `aicallId`). */
    aimessages(aicallId: string, page: PageParams): Promise<RowPage<AimessageRow>> {
      return paginate<AimessageRow>(db('aimessages').where({ aicall_id: aicallId }).whereNull('tm_delete').select('*'), page);
    },
    /** The agent's live cases and the open unowned ones. */
    cases(page: PageParams, status?: CaseStatus): Promise<RowPage<ContactCaseRow>> {
      const q = db('contact_cases').where({ customer_id: s.customerId }).whereNull('tm_delete').select('*');
      q.where((w) => void w.where({ owner_id: s.agentId }).orWhere((o) => void o.where({ status: 'open', owner_id: EMPTY_UUID })));
      if (status) q.where({ status });
      return paginate<ContactCaseRow>(q, page);
    },
    files(page: PageParams): Promise<RowPage<StorageFileRow>> {
      return paginate<StorageFileRow>(ownFiles().select('*'), page);
    },
    async file(id: string): Promise<StorageFileRow | undefined> {
      return (await ownFiles().where({ id }).first()) as StorageFileRow | undefined;
    },
  };
}
