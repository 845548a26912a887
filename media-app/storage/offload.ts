/**
 * Recording offload (docs/storage.md): with S3 configured, finished recording files are moved from
 * DATA_DIR/recordings to the bucket. A sweep every second looks at the files on disk: a file whose
 * recording has ended is uploaded (with its summary as metadata) and then removed locally; a file
 * whose recording was deleted is removed; a file still being written, or of no known recording, is
 * left alone. An upload that fails leaves the file where it is and the sweep backs off (up to 30 s),
 * so an object storage outage delays offloading but loses nothing: downloads are served from the
 * local copy meanwhile.
 */
import fs from 'node:fs';
import type { Logger } from 'pino';
import type { Knex } from '../../core/db/knex';
import { storageBackend } from '../../core/storage/backend';
import { recordingsWriteRepo } from '../../core/repos/recordings';
import { recordingsDir } from '../../core/data-dirs';

const FILE = /^([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})(?:_[A-Za-z0-9_-]+)?\.wav$/;
const MAX_BACKOFF_MS = 30_000;

export interface OffloadDeps {
  db: Knex;
  config: { dataDir: string };
  logger: Logger;
}

export class RecordingOffload {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private delayMs: number;
  private stopped = false;
  /** Files offloaded by this node (for logs and tests). */
  offloaded = 0;

  constructor(
    private readonly deps: OffloadDeps,
    private readonly intervalMs = 1000,
  ) {
    this.delayMs = intervalMs;
  }

  start(): void {
    this.schedule(this.intervalMs);
  }

  private schedule(ms: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.running = this.sweep()
        .then(
          (ok) => {
            this.delayMs = ok ? this.intervalMs : Math.min(MAX_BACKOFF_MS, this.delayMs * 2);
          },
          (err: Error) => {
            this.deps.logger.warn({ err: err.message }, 'recording offload sweep failed');
            this.delayMs = Math.min(MAX_BACKOFF_MS, this.delayMs * 2);
          },
        )
        .finally(() => {
          this.running = null;
          this.schedule(this.delayMs);
        });
    }, ms);
    this.timer.unref();
  }

  /** One pass; false when an upload failed (the caller backs off). */
  async sweep(): Promise<boolean> {
    const backend = storageBackend(this.deps.config);
    if (backend.kind === 'local') return true;
    const dir = recordingsDir(this.deps.config.dataDir);
    const names = (await fs.promises.readdir(dir).catch(() => [] as string[])).filter((n) => FILE.test(n));
    if (names.length === 0) return true;
    const ids = [...new Set(names.map((n) => FILE.exec(n)![1]!))];
    const rows = await recordingsWriteRepo(this.deps.db).filesOf(ids);
    const byId = new Map(rows.map((r) => [r.id, r]));
    let ok = true;
    for (const name of names) {
      if (this.stopped) break;
      const row = byId.get(FILE.exec(name)![1]!);
      if (!row || !row.filenames.includes(name)) continue;
      const deleted = row.tm_delete !== null;
      try {
        if (deleted) await backend.recordings.remove(name);
        else if (row.status === 'ended' && (await backend.recordings.offload(name))) this.offloaded++;
      } catch (err) {
        ok = false;
        this.deps.logger.warn({ err: (err as Error).message, file: name }, 'recording offload failed; the file stays on local disk');
        break; // the store is likely down: retry the lot after the backoff
      }
    }
    return ok;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.running?.catch(() => undefined);
  }
}
