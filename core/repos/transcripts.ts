/**
 * transcripts: the segments of a transcribe. `transcriptsOf` is the read other features build on
 * (summaries): every segment of a call's, conference's or recording's transcribes, oldest first.
 */
import type { Db } from '../db/knex';
import { clock } from '../clock';
import { newId } from '../ids';
import { formatLegacy } from '../time';
import { paginate, toPage, type Page, type PageParams } from '../pagination';
import type { TranscriptRow } from '../db/rows/transcripts';
export type { TranscriptRow } from '../db/rows/transcripts';

export function transcriptJson(r: TranscriptRow) {
  return {
    id: r.id,
    customer_id: r.customer_id,
    transcribe_id: r.transcribe_id,
    direction: r.direction,
    message: r.message,
    offset_ms: r.offset_ms,
    tm_transcript: formatLegacy(r.tm_transcript),
    tm_create: formatLegacy(r.tm_create),
  };
}

export type NewTranscript = Pick<TranscriptRow, 'customer_id' | 'transcribe_id' | 'direction' | 'message' | 'offset_ms'> & {
  confidence?: number;
  tm_transcript?: Date;
};

export function transcriptsRepo(db: Db) {
  return {
    async create(t: NewTranscript): Promise<TranscriptRow> {
      const now = clock.now();
      const [row] = await db('transcripts')
        .insert({ id: newId(), ...t, confidence: t.confidence ?? null, tm_transcript: t.tm_transcript ?? now, tm_create: now })
        .returning('*');
      return row as TranscriptRow;
    },
    async list(customerId: string, transcribeId: string, params: PageParams): Promise<Page<TranscriptRow>> {
      return toPage(await paginate<TranscriptRow>(db('transcripts').where({ customer_id: customerId, transcribe_id: transcribeId }).select('*'), params), (r) => r);
    },
  };
}

/** The messages of one transcribe in offset order (a recording's transcription text, Twilio's Transcription). */
export async function transcriptMessages(db: Db, customerId: string, transcribeId: string): Promise<string[]> {
  const rows = (await db('transcripts')
    .where({ transcribe_id: transcribeId, customer_id: customerId })
    .orderBy([{ column: 'offset_ms' }, { column: 'tm_transcript' }])
    .select('message')) as { message: string }[];
  return rows.map((x) => x.message);
}

/**
 * Every transcript segment about one resource (a call, a conference or a recording: the
 * transcribes whose reference_id it is), oldest first, for one customer. Deleted transcribes are
 * left out. This is the function summaries read.
 */
export async function transcriptsOf(db: Db, customerId: string, referenceId: string): Promise<TranscriptRow[]> {
  return (await db('transcripts as s')
    .join('transcribes as t', 't.id', 's.transcribe_id')
    .where({ 't.customer_id': customerId, 't.reference_id': referenceId })
    .whereNull('t.tm_delete')
    .orderBy([
      { column: 's.tm_transcript', order: 'asc' },
      { column: 's.offset_ms', order: 'asc' },
    ])
    .select('s.*')) as TranscriptRow[];
}
