// A recording row as the record suites seed it: ended, of a call, owned by no one, its file(s) written by
// the suite itself; and the wait for a recording in progress to hold some seconds of media.
import fs from 'node:fs';
import path from 'node:path';
import type { Knex } from '../core/db/knex';
import { EMPTY_UUID, newId } from '../core/ids';

/** Inserts recording `id` of `customerId` for `filename`; `more` adds to or overrides the fields (tm_start, status, tm_create …). */
export async function insertRecording(db: Knex, customerId: string, id: string, filename: string, more: Record<string, unknown> = {}): Promise<void> {
  await db('recordings').insert({
    id,
    customer_id: customerId,
    owner_id: EMPTY_UUID,
    activeflow_id: EMPTY_UUID,
    reference_type: 'call',
    reference_id: newId(),
    status: 'ended',
    on_end_flow_id: EMPTY_UUID,
    filenames: [filename],
    tm_create: new Date(),
    ...more,
  });
}

/**
 * Resolves with its file once the active recording of `referenceId` (a conference, a call) holds `seconds` of
 * the 8 kHz 16-bit mono WAV the recorders write under `dataDir` (a second at a time): a wait on the recorded
 * media, not on the wall clock. Polled (a file's growth has no event), bounded by `timeoutMs`.
 */
export async function recordedSeconds(db: Knex, dataDir: string, referenceId: string, seconds: number, timeoutMs = seconds * 1000 + 10_000): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const row = (await db('recordings').where({ reference_id: referenceId, status: 'recording' }).first()) as { filenames: string[] } | undefined;
    const file = row?.filenames[0] ? path.join(dataDir, 'recordings', row.filenames[0]) : null;
    if (file && fs.existsSync(file) && fs.statSync(file).size >= 44 + seconds * 16_000) return file;
    if (Date.now() > deadline) throw new Error(`${seconds} s recorded of ${referenceId}: not within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
