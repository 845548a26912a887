/**
 * The music on hold a node plays (POST /calls/{id}/moh): a short phrase of notes generated once per
 * node with sox (installed by scripts/setup.sh) into DATA_DIR/moh/, 8 kHz 16-bit mono, looped by the
 * caller. Nothing is fetched: no customer input picks the source, so no egress is involved.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** C5 E5 G5 E5 | F5 A5 C6 A5 | G5 ... : a calm arpeggio, each note faded in and out. */
const NOTES: [hz: number, seconds: number][] = [
  [523.25, 0.4],
  [659.25, 0.4],
  [783.99, 0.4],
  [659.25, 0.4],
  [698.46, 0.4],
  [880.0, 0.4],
  [1046.5, 0.4],
  [880.0, 0.4],
  [783.99, 0.4],
  [987.77, 0.4],
  [1174.66, 0.4],
  [987.77, 0.4],
  [1046.5, 1.2],
];

const pending = new Map<string, Promise<string>>();
/** the music files mohFile gave (resolved paths) */
const made = new Set<string>();

/** The path of the node's music-on-hold file, made on first use (once, even when asked concurrently). */
export function mohFile(dataDir: string): Promise<string> {
  const file = path.join(dataDir, 'moh', 'default.wav');
  let p = pending.get(file);
  if (!p) {
    p = make(file).then((f) => (made.add(path.resolve(f)), f));
    pending.set(file, p);
    p.catch(() => pending.delete(file));
  }
  return p;
}

/**
 * Whether `file` is the node's own music: a path mohFile made in this process. Only that file of the
 * node is ever given as music; any other local path is not (a room's member hold refuses it).
 */
export function isNodeMusic(file: string): boolean {
  return made.has(path.resolve(file));
}

async function make(file: string): Promise<string> {
  if (fs.existsSync(file)) return file;
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const tmp = `${file}.${process.pid}.tmp.wav`;
  const chains = NOTES.flatMap(([hz, s], i) => [...(i ? [':'] : []), 'synth', String(s), 'sine', String(hz), 'fade', '0.03', String(s), '0.08', 'vol', '0.3']);
  await run('sox', ['-n', '-r', '8000', '-c', '1', '-b', '16', '-e', 'signed-integer', tmp, ...chains], { timeout: 20_000 });
  fs.renameSync(tmp, file);
  return file;
}
