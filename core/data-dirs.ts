/**
 * The directories under DATA_DIR that more than one process reads or writes, named once: media-app writes
 * its recordings where control-api and the mailer read them and where our switch (esl/) writes a room's
 * recording for a media-app on the fsmrf backend (ESL_RECORDINGS_DIR's default); media-app fetches the
 * switch's prompts where the switch reads them (MEDIA_SERVER_PROMPTS_DIR's and ESL_SOUNDS_DIR's default).
 * Each is absolute (resolved from the working directory when DATA_DIR is relative).
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
