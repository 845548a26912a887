/**
 * Where a recording's files are read, summarised and removed. The recorder always writes to local
 * disk (DATA_DIR/recordings/<filename>): a WAV header is rewritten at the end, which object storage
 * cannot do. With S3 configured, a finished file is offloaded (uploaded with its summary as object
 * metadata, then removed locally) by the media-app's recording-storage subsystem; until then, and
 * whenever the upload fails, the local file is served, so a recording is never lost to an outage.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { recordingPath } from './local';
import { summarizeWav, type WavSummary } from './wav';
import type { S3Client } from './s3';
import { localRanged, type RangeAsk, type RangedFile } from './range';

export const RECORDING_PREFIX = 'recordings/';

export interface RecordingFiles {
  /** Size, duration and peaks; null when the file is nowhere. */
  summary(filename: string): Promise<WavSummary | null>;
  /** `size` is the whole file's; with `range` the stream carries only those bytes. */
  open(filename: string, range?: RangeAsk): Promise<RangedFile | null>;
  /** Removes the file wherever it is (idempotent). Throws when object storage refuses. */
  remove(filename: string): Promise<void>;
  /** S3 only: uploads a finished local file, then removes it locally. False when there is nothing local. */
  offload(filename: string): Promise<boolean>;
  /**
   * A file on local disk to read (transcription, summaries): the recording's own file, or a
   * temporary copy fetched from object storage; release() removes the copy. null when absent.
   */
  localCopy(filename: string): Promise<{ path: string; release(): Promise<void> } | null>;
}

async function localStat(file: string | null): Promise<fs.Stats | null> {
  return file ? fs.promises.stat(file).catch(() => null) : null;
}

export class LocalRecordingFiles implements RecordingFiles {
  constructor(protected readonly dataDir: string) {}

  async summary(filename: string): Promise<WavSummary | null> {
    const file = recordingPath(this.dataDir, filename);
    return file ? summarizeWav(file) : null;
  }

  async open(filename: string, range?: RangeAsk): Promise<RangedFile | null> {
    const file = recordingPath(this.dataDir, filename);
    const st = await localStat(file);
    return file && st ? localRanged(file, st.size, range) : null;
  }

  async remove(filename: string): Promise<void> {
    const file = recordingPath(this.dataDir, filename);
    if (file) await fs.promises.rm(file, { force: true });
  }

  async offload(_filename: string): Promise<boolean> {
    return false;
  }

  async localCopy(filename: string): Promise<{ path: string; release(): Promise<void> } | null> {
    const file = recordingPath(this.dataDir, filename);
    return file && (await localStat(file)) ? { path: file, release: async () => undefined } : null;
  }
}

export class S3RecordingFiles extends LocalRecordingFiles {
  constructor(
    dataDir: string,
    private readonly s3: S3Client,
  ) {
    super(dataDir);
  }

  override async summary(filename: string): Promise<WavSummary | null> {
    const local = await super.summary(filename);
    if (local) return local;
    if (!recordingPath('/', filename)) return null;
    const h = await this.s3.head(RECORDING_PREFIX + filename);
    if (!h) return null;
    const peaks = (h.metadata.peaks ?? '')
      .split(',')
      .filter(Boolean)
      .map(Number)
      .filter((n) => Number.isFinite(n));
    return { filesize: h.size, duration: Number(h.metadata.duration ?? 0) || 0, peaks };
  }

  override async open(filename: string, range?: RangeAsk): Promise<RangedFile | null> {
    const local = await super.open(filename, range);
    if (local) return local;
    if (!recordingPath('/', filename)) return null;
    return this.s3.get(RECORDING_PREFIX + filename, range);
  }

  override async remove(filename: string): Promise<void> {
    if (!recordingPath('/', filename)) return;
    await this.s3.delete(RECORDING_PREFIX + filename);
    await super.remove(filename);
  }

  override async localCopy(filename: string): Promise<{ path: string; release(): Promise<void> } | null> {
    const local = await super.localCopy(filename);
    if (local || !recordingPath('/', filename)) return local;
    const obj = await this.s3.get(RECORDING_PREFIX + filename);
    if (!obj) return null;
    const dir = await fs.promises.mkdtemp(path.join(os.tmpdir(), 'recording-'));
    const file = path.join(dir, filename);
    await pipeline(obj.stream, fs.createWriteStream(file));
    return { path: file, release: () => fs.promises.rm(dir, { recursive: true, force: true }) };
  }

  override async offload(filename: string): Promise<boolean> {
    const file = recordingPath(this.dataDir, filename);
    if (!file) return false;
    let data: Buffer;
    try {
      data = await fs.promises.readFile(file);
    } catch {
      return false;
    }
    const s = summarizeWav(file);
    await this.s3.put(RECORDING_PREFIX + filename, data, {
      contentType: 'audio/wav',
      metadata: { duration: String(s?.duration ?? 0), peaks: (s?.peaks ?? []).join(',') },
    });
    await fs.promises.rm(file, { force: true });
    return true;
  }
}
