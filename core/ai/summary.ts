/**
 * Summaries: the transcripts of a call, conference, transcribe or recording, summarised through
 * the LLM interface (the server-wide endpoint: AI_LLM_BASE_URL / AI_LLM_MODEL / AI_LLM_API_KEY).
 * Transcripts come from the transcription feature (core/repos/transcripts.ts); a recording that
 * was never transcribed is run through the STT interface here, from its WAV files.
 */
import type { Db } from '../db/knex';
import type { EventPublisher } from '../events/bus';
import { publishResourceEvent } from '../events/catalogue';
import { llmFor } from '../llm/endpoint';
import type { EgressPolicy } from '../net';
import type { ChatLlm } from '../llm/client';
import { summariesRepo, summaryJson, type SummaryRow } from '../repos/summaries';
import { transcriptsOf } from '../repos/transcripts';
import { storageBackend } from '../storage/backend';

export interface SummaryDeps {
  db: Db;
  events: EventPublisher | null;
  dataDir: string;
  env?: NodeJS.ProcessEnv;
  egress?: EgressPolicy;
  /**
   * Speech to text over a recording's WAV file, for recordings never transcribed (the nodes pass
   * media-engine's transcribeWavFile; core does not reach into the media engine). Without it such
   * a recording has no transcript.
   */
  transcribeFile?: (file: string, language: string) => Promise<string>;
}

/** The server-wide LLM client; throws LlmError NOT_CONFIGURED when none is set. */
export function summaryLlm(env: NodeJS.ProcessEnv = process.env, egress?: EgressPolicy): ChatLlm {
  return llmFor({}, env, egress);
}

/** The transcript text of the summary's reference (empty when there is none). */
export async function transcriptText(deps: SummaryDeps, s: SummaryRow): Promise<string> {
  let rows: { direction: string; message: string }[] = [];
  if (s.reference_type === 'transcribe') {
    rows = await deps
      .db('transcripts')
      .where({ transcribe_id: s.reference_id, customer_id: s.customer_id })
      .orderBy([{ column: 'tm_transcript' }, { column: 'offset_ms' }]);
  } else {
    rows = await transcriptsOf(deps.db, s.customer_id, s.reference_id);
  }
  if (rows.length) return rows.map((r) => `${r.direction === 'out' ? 'Agent' : 'Caller'}: ${r.message}`).join('\n');
  const transcribeFile = deps.transcribeFile;
  if (s.reference_type === 'recording' && transcribeFile) {
    const rec = (await deps.db('recordings').where({ id: s.reference_id, customer_id: s.customer_id }).first()) as { filenames: string[] } | undefined;
    const texts: string[] = [];
    for (const name of rec?.filenames ?? []) {
      // the recording's file, or a temporary copy when it is in object storage (docs/storage.md)
      const copy = await storageBackend(deps)
        .recordings.localCopy(name)
        .catch(() => null);
      if (!copy) continue;
      const file = copy.path;
      // the summary's language may be one the recogniser lacks (a German summary of an English call)
      texts.push(
        await transcribeFile(file, s.language || 'en-US')
          .catch(() => transcribeFile(file, 'en-US'))
          .catch(() => '')
          .finally(() => copy.release()),
      );
    }
    return texts.filter(Boolean).join('\n');
  }
  return '';
}

/**
 * Generates (or regenerates) the summary's content; progressing → done. A failure on regenerate
 * keeps the old content; on first generation the summary ends done with an empty content and the
 * reason kept in status_message.
 */
export async function generateSummary(deps: SummaryDeps, s: SummaryRow, regenerate = false): Promise<SummaryRow> {
  const repo = summariesRepo(deps.db);
  let patch: Partial<SummaryRow>;
  try {
    const llm = summaryLlm(deps.env, deps.egress);
    const text = await transcriptText(deps, s);
    if (!text) throw new Error('there is no transcript to summarise');
    const lang = s.language || 'en-US';
    const { content } = await llm.complete({
      messages: [
        { role: 'system', content: `Summarise this conversation in a few sentences, in the language ${lang}. Name the caller's request and the outcome.` },
        { role: 'user', content: text },
      ],
    });
    patch = { status: 'done', content: content.trim(), status_message: '' };
  } catch (e) {
    patch = regenerate ? { status: 'done', status_message: (e as Error).message } : { status: 'done', content: '', status_message: (e as Error).message };
  }
  const row = (await repo.update(s.id, patch)) ?? s;
  if (deps.events) await publishResourceEvent(deps.events, 'summary_updated', summaryJson(row)).catch(() => undefined);
  return row;
}
