/**
 * Object storage on local disk under DATA_DIR/storage (the default backend). Keys are relative
 * paths of safe segments; an S3-compatible backend implements the same ObjectStore interface.
 * Recording files live under DATA_DIR/recordings/<filename> (`recordingPath`).
 */
import fs from 'node:fs';
import path from 'node:path';
import { localRanged, type RangeAsk, type RangedFile } from './range';
import { recordingsDir } from '../data-dirs';

export interface ObjectStore {
  put(key: string, data: Buffer): Promise<void>;
  /**
   * null when absent. `size` is the whole object's; with `range` asked, one read: `range` is what of it the
   * object has (or 'unsatisfiable') and the stream carries only those bytes (core/storage/range.ts).
   */
  get(key: string, range?: RangeAsk): Promise<RangedFile | null>;
  delete(key: string): Promise<void>;
}

const SAFE = /^[A-Za-z0-9][A-Za-z0-9._-]{0,200}$/;

function resolveIn(root: string, key: string): string {
  const parts = key.split('/');
  if (!parts.every((p) => SAFE.test(p) && p !== '..')) throw new Error(`unsafe object key ${JSON.stringify(key)}`);
  return path.join(root, ...parts);
}

export class LocalObjectStore implements ObjectStore {
  constructor(readonly root: string) {}

  async put(key: string, data: Buffer): Promise<void> {
    const file = resolveIn(this.root, key);
    await fs.promises.mkdir(path.dirname(file), { recursive: true });
    const tmp = `${file}.tmp-${process.pid}`;
    await fs.promises.writeFile(tmp, data);
    await fs.promises.rename(tmp, file);
  }

  async get(key: string, range?: RangeAsk): Promise<RangedFile | null> {
    const file = resolveIn(this.root, key);
    try {
      const st = await fs.promises.stat(file);
      return localRanged(file, st.size, range);
    } catch {
      return null;
    }
  }

  async delete(key: string): Promise<void> {
    await fs.promises.rm(resolveIn(this.root, key), { force: true });
  }
}

export function storageRoot(dataDir: string): string {
  return path.join(dataDir, 'storage');
}

/** Where a recording's file is: DATA_DIR/recordings/<filename> (filename = one safe segment). */
export function recordingPath(dataDir: string, filename: string): string | null {
  if (!SAFE.test(filename)) return null;
  return path.join(recordingsDir(dataDir), filename);
}
