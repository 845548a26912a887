/**
 * Transcribes a WAV file (8 kHz 16-bit mono, as the recorder writes) with an STT provider: the
 * finished utterances joined by spaces. Frames are paced in slices, since write() drops frames past
 * the recogniser's backlog.
 */
import { readWav } from '../audio/wav';
import type { TranscriptEvent } from './provider';
import { createSttProvider } from './index';

export async function transcribeWavFile(file: string, language: string, provider?: string): Promise<string> {
  const { samples } = readWav(file);
  const stream = createSttProvider(provider).createStream({ language });
  const parts: string[] = [];
  stream.on('transcript', (t: TranscriptEvent) => t.final && t.text.trim() && parts.push(t.text.trim()));
  stream.on('error', () => undefined);
  for (let off = 0; off < samples.length; off += 160) {
    const f = new Int16Array(160);
    f.set(samples.subarray(off, Math.min(samples.length, off + 160)));
    stream.write(f);
    if ((off / 160) % 250 === 249) await new Promise((r) => setTimeout(r, 50));
  }
  await stream.end();
  return parts.join(' ');
}
