/**
 * The directories under DATA_DIR that more than one process reads or writes, named once: media-app writes
 * its recordings where control-api and the mailer read them and where our switch (esl/) writes a room's
 * recording for a media-app on the fsmrf backend (ESL_RECORDINGS_DIR's default); media-app fetches the
 * switch's prompts where the switch reads them (MEDIA_SERVER_PROMPTS_DIR's and ESL_SOUNDS_DIR's default).
 * Each is absolute (resolved from the working directory when DATA_DIR is relative). media-app's prompt
 * cache and its embedded engine's cache are its alone (privateDir: 0700, ours).
 */
import fs from 'node:fs';
import path from 'node:path';

/** `$DATA_DIR/recordings`: every recording's WAV (calls, conferences, voicemail). */
export function recordingsDir(dataDir: string): string {
  return path.resolve(dataDir, 'recordings');
}

/** `$DATA_DIR/switch-prompts`: the prompts media-app fetches or synthesises for the switch to play. */
export function switchPromptsDir(dataDir: string): string {
  return path.resolve(dataDir, 'switch-prompts');
}

/** `$DATA_DIR/prompt-cache`: media-app's cache of fetched and synthesised prompts (MEDIA_SERVER_PROMPT_CACHE_DIR's default). */
export function promptCacheDir(dataDir: string): string {
  return path.resolve(dataDir, 'prompt-cache');
}

/** `$DATA_DIR/engine-cache`: the embedded media engine's cache of converted prompts, fetched URLs and speech (media-app's alone). */
export function engineCacheDir(dataDir: string): string {
  return path.resolve(dataDir, 'engine-cache');
}

/**
 * `dir` as a directory of this process's user alone: made 0700 when missing (parents too, as mkdir -p);
 * an existing one is refused unless it is a directory (not a link) owned by this process's user and not
 * writable by group or others, whose files another user could plant or swap. `setting` names it in the
 * error (the setting the operator changes). Returns the absolute path.
 */
export function privateDir(dir: string, setting: string): string {
  const abs = path.resolve(dir);
  if (fs.mkdirSync(abs, { recursive: true, mode: 0o700 }) !== undefined) fs.chmodSync(abs, 0o700);
  const st = fs.lstatSync(abs);
  const uid = process.getuid?.();
  if (!st.isDirectory()) throw new Error(`${setting}: ${abs} is not a directory (a link or a file): give a directory of media-app's own`);
  if (uid !== undefined && st.uid !== uid) throw new Error(`${setting}: ${abs} is owned by uid ${st.uid}, not by this process's user (uid ${uid}): give a directory of media-app's own`);
  if (st.mode & 0o022) throw new Error(`${setting}: ${abs} is writable by group or others (mode ${(st.mode & 0o777).toString(8)}): make it 0700 (chmod go-w at least) or give another`);
  return abs;
}
