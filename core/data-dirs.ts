/**
 * The directories under DATA_DIR that more than one process reads or writes, named once: media-app writes
 * its recordings where control-api and the mailer read them and where our switch (esl/) writes a room's
 * recording for a media-app on the fsmrf backend (ESL_RECORDINGS_DIR's default); media-app fetches the
 * switch's prompts where the switch reads them (MEDIA_SERVER_PROMPTS_DIR's and ESL_SOUNDS_DIR's default).
 * Each is absolute (resolved from the working directory when DATA_DIR is relative). media-app's prompt
 * cache and its embedded engine's cache are its alone (core/files/private-dir.ts: 0700, ours).
 */
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
