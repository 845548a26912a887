/**
 * The voice menu's login (Asterisk VoiceMailMain): with no box given the caller keys in the box
 * number, then the PIN, each ended by `#`; three failed tries end the call ("Login incorrect"
 * after each, never saying which part was wrong).
 *
 * Across calls, wrong PINs are counted per box and per caller (core/voicemail/pin-lockout.ts,
 * Redis): a locked box takes no PIN (the try fails as a wrong one would, so the lock tells a guesser
 * nothing about the box), and a locked caller hears "Too many failed logins" and is hung up on.
 * Each wrong PIN on a box publishes `voicemail_box_login_failed`, each lock `voicemail_box_locked`.
 */
import { checkPin, voicemailBoxesRepo, voicemailBoxJson, type VoicemailBoxRow } from '../../core/voicemail/boxes';
import { publishResourceEvent } from '../../core/events/catalogue';
import type { PinFailure } from '../../core/voicemail/pin-lockout';
import type { CallAudio, DigitQueue } from './audio';
import type { VoicemailDeps } from './service';

export const MAX_LOGIN_TRIES = 3;
/** Seconds the caller has for each key. */
export const KEY_TIMEOUT_MS = 6000;

/** The hash a PIN is checked against when there is no box to check it against (same work, never a match). */
const NO_BOX = { pin_hash: 'scrypt$16384$8$1$AAAAAAAAAAAAAAAAAAAAAA==$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=' };

export type LoginResult = VoicemailBoxRow | 'login_failed' | 'locked';

/** Publishes what a wrong PIN on `box` did (webhooks, the event stream); never fails the login. */
async function published(svc: VoicemailDeps, box: VoicemailBoxRow, caller: string, f: PinFailure): Promise<void> {
  const json = voicemailBoxJson(box);
  const events: [Parameters<typeof publishResourceEvent>[1], Record<string, unknown>][] = [['voicemail_box_login_failed', { caller, failures: f.boxFailures }]];
  if (f.boxLockedSec) events.push(['voicemail_box_locked', { caller, locked: 'box', lock_sec: f.boxLockedSec }]);
  if (f.callerLockedSec) events.push(['voicemail_box_locked', { caller, locked: 'caller', lock_sec: f.callerLockedSec }]);
  for (const [type, extra] of events) {
    await publishResourceEvent(svc.events, type, { ...json, ...extra }).catch((err: Error) => svc.logger.warn({ err: err.message, type }, 'event publish failed'));
  }
}

export async function login(
  svc: VoicemailDeps,
  customerId: string,
  audio: CallAudio,
  digits: DigitQueue,
  o: { box: VoicemailBoxRow | null; skipPin: boolean; caller: string },
  signal: AbortSignal,
): Promise<LoginResult> {
  if (o.box && o.skipPin) return o.box;
  const lockout = svc.pinLockout;
  for (let attempt = 1; attempt <= MAX_LOGIN_TRIES; attempt++) {
    if (await lockout.callerLockedFor(customerId, o.caller)) {
      await audio.say('Too many failed logins.', signal);
      return 'locked';
    }
    let box = o.box;
    if (!box) {
      await audio.say('Please enter your mailbox number, followed by the pound key.', signal);
      const number = await digits.read(20, KEY_TIMEOUT_MS, signal);
      box = number ? await voicemailBoxesRepo(svc.db).byNumber(customerId, number) : null;
    }
    await audio.say('Please enter your password, followed by the pound key.', signal);
    const pin = await digits.read(10, KEY_TIMEOUT_MS, signal);
    const boxLocked = box ? (await lockout.boxLockedFor(box.id)) > 0 : false;
    // the PIN is checked (scrypt) even for an unknown or locked box: no timing tells which part was wrong
    const ok = await checkPin(box && !boxLocked ? box : NO_BOX, pin);
    if (box && ok && !boxLocked) {
      await lockout.succeed(box.id);
      return box;
    }
    // a try on a locked box counts for the caller only (it must not lengthen the box's lock)
    const f = await lockout.fail(customerId, o.caller, box ? { id: box.id, locked: boxLocked } : null);
    svc.logger.info({ box: box?.id ?? null, caller: o.caller, boxFailures: f.boxFailures, callerFailures: f.callerFailures, boxLocked }, 'voicemail login failed');
    if (box) await published(svc, box, o.caller, f);
    digits.clear();
    if (f.callerLockedSec) {
      await audio.say('Too many failed logins.', signal);
      return 'locked';
    }
    await audio.say('Login incorrect.', signal);
  }
  return 'login_failed';
}
