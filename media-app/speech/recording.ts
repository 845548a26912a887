/**
 * Transcription of a recording (transcribe_recording, POST /transcribes reference_type recording):
 * its WAV files are fed to the STT provider as fast as the recogniser takes them (pocketsphinx runs
 * at about 6x real time; media-engine/stt/file.ts transcribeSamples, none dropped). A recording made with separate legs has -in/-out files, transcribed as
 * directions in and out; a single mixed file is direction `both` when asked for, else the asked one.
 */
import { readWav, transcribeSamples } from '../../media-engine';
import { storageBackend } from '../../core/storage/backend';
import { recordingsReadRepo } from '../../core/repos/recordings';
import type { TranscribeRow } from '../../core/repos/transcribes';
import { finishTranscribe, storeSegment, type SpeechDeps } from './transcription';
import type { EgressPolicy } from '../../core/net';
import { monoOf, transcribeCloud, type RecordingEngine } from './recording-cloud';

function sideOf(filename: string): 'in' | 'out' | null {
  const m = /_(in|out)\.wav$/i.exec(filename);
  return m ? (m[1]!.toLowerCase() as 'in' | 'out') : null;
}

/** Transcribes every file of the recording; the transcribe is done afterwards (also on failure). False when it failed. */
export async function transcribeRecording(deps: SpeechDeps & { dataDir: string; egress: EgressPolicy }, row: TranscribeRow): Promise<boolean> {
  try {
    const rec = await recordingsReadRepo(deps.db).getById(row.reference_id);
    if (!rec) throw new Error(`recording ${row.reference_id} not found`);
    const files = rec.filenames.filter((f) => {
      const side = sideOf(f);
      if (row.direction === 'both') return side === null || !rec.filenames.some((g) => sideOf(g) === null);
      return side === row.direction || (side === null && !rec.filenames.some((g) => sideOf(g) === row.direction));
    });
    for (const f of files) {
      // the recording's file, or a temporary copy when it is in object storage (docs/storage.md)
      const copy = await storageBackend(deps).recordings.localCopy(f);
      if (!copy) continue;
      const direction: 'in' | 'out' = sideOf(f) ?? (row.direction === 'out' ? 'out' : 'in');
      const { samples, info } = await (async () => {
        try {
          return readWav(copy.path);
        } finally {
          await copy.release();
        }
      })();
      if (row.provider === 'google' || row.provider === 'openai') {
        // a cloud engine takes the whole file at its own rate (16 kHz for a wideband call's recording)
        const segs = await transcribeCloud(row.provider as RecordingEngine, { samples: monoOf(samples, info.format.channels), rate: info.format.sampleRate }, row.language, deps.egress);
        for (const s of segs) await storeSegment(deps, row, { text: s.text, direction, offsetMs: s.offsetMs, confidence: s.confidence });
        continue;
      }
      // the local recogniser: as fast as it takes the audio, none dropped (media-engine/stt/file.ts)
      const writes: Promise<void>[] = [];
      const rate = info.format.sampleRate;
      if (rate !== 8000 && rate !== 16000) throw new Error(`recording ${f}: ${rate} Hz, not 8000 or 16000`);
      await transcribeSamples(monoOf(samples, info.format.channels), {
        language: row.language,
        provider: row.provider || undefined,
        direction: direction === 'in' ? 'inbound' : 'outbound',
        sampleRate: rate,
        onFinal: (t) => writes.push(storeSegment(deps, row, { text: t.text, direction, offsetMs: t.offsetMs, confidence: t.confidence })),
      }).finally(() => Promise.allSettled(writes));
    }
    return true;
  } catch (err) {
    deps.logger.warn({ err: (err as Error).message, transcribe: row.id }, 'recording transcription failed');
    return false;
  } finally {
    await finishTranscribe(deps, row.id);
  }
}
