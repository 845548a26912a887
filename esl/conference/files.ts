/**
 * Where the `conference` API may read and write files: `play` reads sounds under one directory,
 * `recording start` writes WAVs under another (ESL_SOUNDS_DIR, ESL_RECORDINGS_DIR; esl/config.ts). A
 * path is resolved (a relative one against its base) and must then lie inside its root, symbolic links
 * followed, so no client of the event socket reads or overwrites another file the process could.
 */
import fs from 'node:fs';
import path from 'node:path';

/** The two roots (absolute). */
export interface ConferenceFiles {
  recordings: string;
  sounds: string;
}

/** A path inside its root (`path`: resolved, links followed), or why not: a `..` segment, or outside the root. */
export type Confined = { ok: true; path: string } | { ok: false; why: 'parent' | 'outside' };

/** The real path of `p`: of the file when it exists, else of its directory (the file's name kept), else `p` itself. */
function real(p: string): string {
  try {
    return fs.realpathSync(p);
  } catch {
    try {
      return path.join(fs.realpathSync(path.dirname(p)), path.basename(p));
    } catch {
      return p;
    }
  }
}

/** `p` resolved against `base` (default: the root) must lie inside `root`; a `..` segment is refused before anything is resolved. */
export function confine(root: string, p: string, base: string = root): Confined {
  if (p.split(/[\\/]/).includes('..')) return { ok: false, why: 'parent' };
  const top = real(path.resolve(root));
  const at = real(path.resolve(root, base, p));
  if (at !== top && !at.startsWith(top.endsWith(path.sep) ? top : top + path.sep)) return { ok: false, why: 'outside' };
  return { ok: true, path: at };
}
