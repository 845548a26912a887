/**
 * The storage backend of a process: local disk (default) or S3-compatible object storage when
 * S3_BUCKET is set (docs/storage.md). One per DATA_DIR (the local half: recordings are written
 * there first), built on first use, so every component given the same data directory shares it; a
 * process that embeds the platform (tests) may set it explicitly with configureStorage.
 */
import path from 'node:path';
import { z } from 'zod';
import { ApiError } from '../errors';
import { LocalObjectStore, storageRoot, type ObjectStore } from './local';
import { LocalRecordingFiles, S3RecordingFiles, type RecordingFiles } from './recording-files';
import { S3Client, S3Error, S3ObjectStore, type S3Settings } from './s3';

export interface StorageBackend {
  readonly kind: 'local' | 's3';
  /** storage_files objects (keys `<customer_id>/<id>`). */
  readonly files: ObjectStore;
  readonly recordings: RecordingFiles;
  readonly s3: S3Client | null;
}

/** storage_files objects live under this key prefix in the bucket; recordings under `recordings/`. */
export const FILES_PREFIX = 'storage/';

const bool = z.enum(['true', 'false', '1', '0']).transform((v) => v === 'true' || v === '1');
const envSchema = z.object({
  S3_ENDPOINT: z.url().optional(),
  S3_BUCKET: z
    .string()
    .regex(/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/, 'must be a valid bucket name')
    .optional(),
  S3_REGION: z
    .string()
    .regex(/^[a-z0-9-]{1,40}$/)
    .optional(),
  S3_ACCESS_KEY_ID: z.string().min(1).optional(),
  S3_SECRET_ACCESS_KEY: z.string().min(1).optional(),
  S3_FORCE_PATH_STYLE: bool.optional(),
});

/** S3 settings from the environment; null when S3_BUCKET is unset (local disk). Throws on a partial set. */
export function s3SettingsFromEnv(env: NodeJS.ProcessEnv = process.env): S3Settings | null {
  const input = Object.fromEntries(Object.keys(envSchema.shape).map((k) => [k, env[k] === '' ? undefined : env[k]]));
  const r = envSchema.safeParse(input);
  if (!r.success) throw new Error(`invalid S3 configuration: ${r.error.issues.map((i) => `${String(i.path[0])}: ${i.message}`).join('; ')}`);
  const e = r.data;
  if (!e.S3_BUCKET) return null;
  const missing = (['S3_ACCESS_KEY_ID', 'S3_SECRET_ACCESS_KEY'] as const).filter((k) => !e[k]);
  if (missing.length) throw new Error(`invalid S3 configuration: S3_BUCKET is set but ${missing.join(' and ')} ${missing.length > 1 ? 'are' : 'is'} not`);
  const region = e.S3_REGION ?? 'us-east-1';
  return {
    endpoint: e.S3_ENDPOINT ?? `https://s3.${region}.amazonaws.com`,
    bucket: e.S3_BUCKET,
    region,
    accessKeyId: e.S3_ACCESS_KEY_ID!,
    secretAccessKey: e.S3_SECRET_ACCESS_KEY!,
    forcePathStyle: e.S3_FORCE_PATH_STYLE ?? Boolean(e.S3_ENDPOINT),
  };
}

export function createBackend(dataDir: string, s3: S3Settings | null): StorageBackend {
  if (!s3) {
    return { kind: 'local', files: new LocalObjectStore(storageRoot(dataDir)), recordings: new LocalRecordingFiles(dataDir), s3: null };
  }
  const client = new S3Client(s3);
  return { kind: 's3', files: answering(new S3ObjectStore(client, FILES_PREFIX)), recordings: new S3RecordingFiles(dataDir, client), s3: client };
}

/** Every user of the files store (storage_files, agent files, RAG sources) gets the 503 envelope on S3 failures. */
function answering(store: ObjectStore): ObjectStore {
  return {
    put: (key, data) => viaStorage(() => store.put(key, data)),
    get: (key, range) => viaStorage(() => store.get(key, range)),
    delete: (key) => viaStorage(() => store.delete(key)),
  };
}

const backends = new Map<string, StorageBackend>();

/** Sets the backend of a data directory (instead of reading S3_* from the environment); null: local disk. */
export function configureStorage(config: { dataDir: string }, s3: S3Settings | null): StorageBackend {
  const b = createBackend(config.dataDir, s3);
  backends.set(path.resolve(config.dataDir), b);
  return b;
}

export function storageBackend(config: { dataDir: string }): StorageBackend {
  const dir = path.resolve(config.dataDir);
  let b = backends.get(dir);
  if (!b) {
    b = createBackend(config.dataDir, s3SettingsFromEnv());
    backends.set(dir, b);
  }
  return b;
}

/** Object storage failures as the API answers them: 503 SERVICE_UNAVAILABLE naming the cause. */
export function storageFailure(err: unknown): unknown {
  if (err instanceof S3Error) {
    const why = err.code === 'Unreachable' ? err.message : `object storage refused the request: ${err.code}`;
    return new ApiError('SERVICE_UNAVAILABLE', why, { details: [{ storage_error: err.code }] });
  }
  return err;
}

/** Runs `f`, turning object storage failures into the 503 envelope. */
export async function viaStorage<T>(f: () => Promise<T>): Promise<T> {
  try {
    return await f();
  } catch (err) {
    throw storageFailure(err);
  }
}
