/**
 * The optional AI summary of a voicemail message (a box with `ai_summary`, docs/pbx.md): the
 * message's transcript through the platform's LLM (the server-wide endpoint the `ai_summary` flow
 * action uses: AI_LLM_BASE_URL / AI_LLM_MODEL / AI_LLM_API_KEY, requests through the egress policy).
 * A failure gives no summary and says why; the message itself is never touched by it.
 */
import { summaryLlm } from '../ai/summary';
import type { EgressPolicy } from '../net';

/** What the summary step wrote: a summary, or the reason there is none (one of the two is ''). */
export interface VoicemailSummary {
  summary: string;
  summary_error: string;
}

/** The longest summary kept (an LLM that rambles is cut here). */
const MAX_SUMMARY = 2000;

export async function summarizeVoicemail(transcript: string, o: { language: string; caller: string; env?: NodeJS.ProcessEnv; egress?: EgressPolicy }): Promise<VoicemailSummary> {
  if (!transcript.trim()) return { summary: '', summary_error: 'there is no transcript to summarise' };
  try {
    const llm = summaryLlm(o.env, o.egress);
    const { content } = await llm.complete({
      messages: [
        {
          role: 'system',
          content: `Summarise this voicemail message in one or two short sentences, in the language ${o.language}: who called, what they want, and any number or time they gave. Answer with the summary only.`,
        },
        { role: 'user', content: `Caller: ${o.caller}\nMessage: ${transcript}` },
      ],
    });
    const summary = content.trim().slice(0, MAX_SUMMARY);
    return summary ? { summary, summary_error: '' } : { summary: '', summary_error: 'the LLM answered with no text' };
  } catch (e) {
    return { summary: '', summary_error: (e as Error).message.slice(0, 500) };
  }
}
