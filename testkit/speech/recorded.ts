// What a recording holds, checked from outside the platform: where a known µ-law utterance sits in
// a recording's 8 kHz PCM (sample for sample: a PCMU caller recorded untouched decodes to exactly
// the µ-law it sent), and what pocketsphinx says of the recording's samples when fed directly.
import { G711_TABLES } from '../../core/audio/g711';
import { transcribeSamples } from '../../media-engine';

export interface SpeechFound {
  /** where the utterance starts in the recording, samples (-1: not found) */
  offset: number;
  /** samples of the utterance equal to the recording's there */
  equal: number;
  total: number;
}

/**
 * Finds `ulaw` (8 kHz µ-law) in `recorded` (8 kHz 16-bit PCM): the offset where the utterance's first
 * loud 50 ms match exactly, then how many of all its samples match there.
 */
export function speechInRecording(recorded: Int16Array, ulaw: Buffer): SpeechFound {
  const pcm = Int16Array.from(ulaw, (u) => G711_TABLES.muDecode[u]!);
  const first = pcm.findIndex((x) => Math.abs(x) > 500);
  const probe = 400;
  let offset = -1;
  for (let o = first; o + probe <= recorded.length && offset < 0; o++) {
    let k = 0;
    while (k < probe && recorded[o + k] === pcm[first + k]) k++;
    if (k === probe) offset = o - first;
  }
  if (offset < 0) return { offset, equal: 0, total: pcm.length };
  let equal = 0;
  for (let k = 0; k < pcm.length; k++) if (recorded[offset + k] === pcm[k]) equal++;
  return { offset, equal, total: pcm.length };
}

/** pocketsphinx's free-form text of 8 kHz samples (the platform's file feeder): its final utterances joined by spaces. */
export async function pocketsphinxText(samples: Int16Array): Promise<string> {
  const r = await transcribeSamples(samples, { language: 'en-US', provider: 'pocketsphinx' });
  if (r.droppedFrames) throw new Error(`pocketsphinx dropped ${r.droppedFrames} frames`);
  return r.text;
}
