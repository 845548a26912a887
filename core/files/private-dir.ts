/**
 * A directory that is this process's user's alone: a pure leaf (node's fs and path only) that media-app's
 * data directories (core/data-dirs.ts) and media-engine's default cache (worker/source-resolver.ts) share.
 */
import fs from 'node:fs';
import path from 'node:path';

/**
 * `dir` as a directory of this process's user alone: made 0700 when missing (parents too, as mkdir -p);
 * an existing one is refused unless it is a directory (not a link) owned by this process's user and not
 * writable by group or others, whose files another user could plant or swap. `setting` names it in the
 * error (the setting the operator changes), `remedy` what to do about a refused one. Returns the absolute path.
 */
export function privateDir(dir: string, setting: string, remedy = "give a directory of media-app's own"): string {
  const abs = path.resolve(dir);
  if (fs.mkdirSync(abs, { recursive: true, mode: 0o700 }) !== undefined) fs.chmodSync(abs, 0o700);
  const st = fs.lstatSync(abs);
  const uid = process.getuid?.();
  if (!st.isDirectory()) throw new Error(`${setting}: ${abs} is not a directory (a link or a file): ${remedy}`);
  if (uid !== undefined && st.uid !== uid) throw new Error(`${setting}: ${abs} is owned by uid ${st.uid}, not by this process's user (uid ${uid}): ${remedy}`);
  if (st.mode & 0o022) throw new Error(`${setting}: ${abs} is writable by group or others (mode ${(st.mode & 0o777).toString(8)}): make it 0700 (chmod go-w at least) or give another`);
  return abs;
}
