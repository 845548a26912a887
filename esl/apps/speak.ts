/**
 * `speak` (mod_dptools' speak_function): `<engine>|<voice>|<text>` (or `<voice>|<text>`, or the text
 * alone, with `tts_engine` / `tts_voice`) spoken through the engine's TTS providers (espeak-ng, flite;
 * `espeak` names espeak-ng). `playback_terminators` stop it. Without an engine, a voice or text, or with
 * an engine we do not have, the channel hangs up (AppRefused).
 */
import type { PlayResult } from '../../media-engine';
import { playbackTerminators } from './args';
import { AppRefused, onDigits, setVar, varOf, type AppContext } from './context';

/** speak_function's split: at most three parts, the text unstripped (it may hold `|`). */
export function speakArgs(data: string): { engine: string; voice: string; text: string } {
  const parts = data.split('|');
  if (parts.length === 1) return { engine: '', voice: '', text: data };
  if (parts.length === 2) return { engine: '', voice: parts[0]!, text: parts[1]! };
  return { engine: parts[0]!, voice: parts[1]!, text: parts.slice(2).join('|') };
}

export async function speak(ctx: AppContext, data: string): Promise<string> {
  const a = speakArgs(data);
  const engine = a.engine || varOf(ctx, 'tts_engine') || '';
  const voice = a.voice || varOf(ctx, 'tts_voice') || '';
  if (!engine || !voice || !a.text.trim()) throw new AppRefused(`speak: invalid params [${engine}][${voice}]`);
  await speakWith(ctx, a.text, engine, voice);
  return '_none_';
}

/**
 * Speaks `text` on the channel with a TTS engine and voice, `playback_terminators` stopping it; null
 * when the channel hung up meanwhile. A TTS failure refuses (AppRefused: the channel hangs up).
 */
export async function speakWith(ctx: AppContext, text: string, engine: string, voice: string): Promise<PlayResult | null> {
  setVar(ctx, 'playback_terminator_used', '');
  const terminators = playbackTerminators(varOf(ctx, 'playback_terminators'));
  const ep = ctx.channel.endpoint;
  const release = onDigits(ctx, (e) => {
    if (!terminators.includes(e.dtmf)) return;
    setVar(ctx, 'playback_terminator_used', e.dtmf);
    void ep.stopPlayback().catch(() => undefined);
  });
  try {
    return await ep.say(text, { provider: engine === 'espeak' ? 'espeak-ng' : engine, voice });
  } catch (e) {
    if (ctx.signal.aborted) return null;
    throw new AppRefused(`speak: ${(e as Error).message}`);
  } finally {
    release();
  }
}
