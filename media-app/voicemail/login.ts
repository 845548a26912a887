/**
 * The voice menu's login (Asterisk VoiceMailMain): with no box given the caller keys in the box
 * number, then the PIN, each ended by `#`; three failed tries end the call ("Login incorrect"
 * after each, never saying which part was wrong).
 */
import { checkPin, voicemailBoxesRepo, type VoicemailBoxRow } from '../../core/voicemail/boxes';
import type { CallAudio, DigitQueue } from './audio';
import type { VoicemailService } from './service';

export const MAX_LOGIN_TRIES = 3;
/** Seconds the caller has for each key. */
export const KEY_TIMEOUT_MS = 6000;

export async function login(
  svc: VoicemailService,
  customerId: string,
  audio: CallAudio,
  digits: DigitQueue,
  o: { box: VoicemailBoxRow | null; skipPin: boolean },
  signal: AbortSignal,
): Promise<VoicemailBoxRow | null> {
  if (o.box && o.skipPin) return o.box;
  for (let attempt = 1; attempt <= MAX_LOGIN_TRIES; attempt++) {
    let box = o.box;
    if (!box) {
      await audio.say('Please enter your mailbox number, followed by the pound key.', signal);
      const number = await digits.read(20, KEY_TIMEOUT_MS, signal);
      box = number ? await voicemailBoxesRepo(svc.db).byNumber(customerId, number) : null;
    }
    await audio.say('Please enter your password, followed by the pound key.', signal);
    const pin = await digits.read(10, KEY_TIMEOUT_MS, signal);
    // the PIN is checked (scrypt) even for an unknown box: no timing tells which part was wrong
    const ok = await checkPin(box ?? { pin_hash: 'scrypt$16384$8$1$AAAAAAAAAAAAAAAAAAAAAA==$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=' }, pin);
    if (box && ok) return box;
    digits.clear();
    await audio.say('Login incorrect.', signal);
  }
  return null;
}
