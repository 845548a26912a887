/**
 * The voice menu of a box (flow action `voicemail_main`; Asterisk VoiceMailMain semantics): login,
 * "You have N new and M old messages", then
 *   main:     1 play, 0 mailbox options, * help, # exit
 *   message:  1 first, 4 previous, 5 repeat, 6 next, 7 delete, 9 save (to Old), 3 advanced (2 call back), * help, # exit
 *   options:  1 unavailable greeting, 2 busy greeting, 3 name, 5 change PIN, * back
 * Messages play new ones first (oldest first), then old ones. A new message heard moves to Old;
 * every count change publishes the MWI notice. Keys pressed during a prompt choose at once.
 */
import { newId } from '../../core/ids';
import { storageBackend } from '../../core/storage/backend';
import { PIN_PATTERN, voicemailBoxesRepo, type GreetingKind, type VoicemailBoxRow } from '../../core/voicemail/boxes';
import { voicemailMessagesRepo, type VoicemailMessageRow } from '../../core/voicemail/messages';
import { mailboxSummary } from '../../core/voicemail/mwi';
import { pinCaller } from '../../core/voicemail/pin-lockout';
import type { Address, CallPort } from '../flow/call-port';
import { CallAudio, DigitQueue } from './audio';
import { KEY_TIMEOUT_MS, login } from './login';
import { MIN_MESSAGE_MS } from './leave';
import { messageChanged } from './notify';
import type { VoicemailDeps } from './service';

/** login_failed: three wrong logins; locked: the caller is locked out by wrong PINs across calls (core/voicemail/pin-lockout.ts). */
export type MenuResult = 'exit' | 'login_failed' | 'locked' | 'box_not_found' | 'timeout';

/** Unanswered prompts in a row before the menu says goodbye. */
const MAX_SILENT_PROMPTS = 3;
/** Seconds a recorded greeting may last. */
const GREETING_MAX_SEC = 60;

const PROMPT = {
  main: 'Press 1 to listen to your messages. Press 0 for mailbox options. Press star for help. Press pound to exit.',
  mainHelp: 'Press 1 to listen to your messages. Press 0 to record your greetings or change your password. Press pound to exit.',
  message: 'Press 4 for the previous message, 5 to repeat, 6 for the next message, 7 to delete, 9 to save, 3 for advanced options, star for help, pound to exit.',
  messageHelp:
    'Press 1 for the first message. Press 4 for the previous message. Press 5 to repeat this message. Press 6 for the next message. Press 7 to delete it. Press 9 to save it. Press 3 to call the caller back. Press pound to exit.',
  options: 'Press 1 to record your unavailable message, 2 to record your busy message, 3 to record your name, 5 to change your password, star to return.',
  advanced: 'Press 2 to call back the caller. Press star to return.',
};

function counted(n: number, what: string): string {
  return `${n === 0 ? 'no' : n} ${what} ${n === 1 ? 'message' : 'messages'}`;
}

/** The address the callback dials: the caller as the call's source gave it. */
function callbackAddress(m: VoicemailMessageRow): Address | null {
  if (!m.caller_number) return null;
  const type = m.caller_type === 'extension' || m.caller_type === 'sip' || m.caller_type === 'tel' ? m.caller_type : m.caller_number.startsWith('+') ? 'tel' : null;
  return type ? { type, target: m.caller_number } : null;
}

class Menu {
  private readonly messages: ReturnType<typeof voicemailMessagesRepo>;
  private list: VoicemailMessageRow[] = [];
  private silent = 0;

  constructor(
    private readonly svc: VoicemailDeps,
    private box: VoicemailBoxRow,
    private readonly call: CallPort,
    private readonly audio: CallAudio,
    private readonly digits: DigitQueue,
    private readonly signal: AbortSignal,
  ) {
    this.messages = voicemailMessagesRepo(svc.db);
  }

  private say(text: string): Promise<void> {
    return this.audio.say(text, this.signal);
  }

  /** The next key after a prompt; '' after the caller let MAX_SILENT_PROMPTS prompts pass. */
  private async choose(prompt: string): Promise<string> {
    for (;;) {
      await this.say(prompt);
      const k = await this.digits.next(KEY_TIMEOUT_MS, this.signal);
      if (k) {
        this.silent = 0;
        return k;
      }
      if (++this.silent >= MAX_SILENT_PROMPTS) return '';
    }
  }

  private async reload(): Promise<void> {
    this.list = [...(await this.messages.inFolder(this.box.id, 'new')), ...(await this.messages.inFolder(this.box.id, 'old'))];
  }

  async run(): Promise<MenuResult> {
    const s = await mailboxSummary(this.svc.db, this.box.id);
    await this.say(`You have ${counted(s.newCount, 'new')} and ${counted(s.oldCount, 'old')}.`);
    for (;;) {
      const k = await this.choose(PROMPT.main);
      if (k === '') return this.bye('timeout');
      if (k === '#') return this.bye('exit');
      if (k === '*') await this.say(PROMPT.mainHelp);
      else if (k === '1') {
        const r = await this.browse();
        if (r) return r;
      } else if (k === '0') {
        const r = await this.options();
        if (r) return r;
      } else await this.say('That is not a valid choice.');
    }
  }

  private async bye(r: MenuResult): Promise<MenuResult> {
    this.digits.clear();
    await this.say('Goodbye.');
    return r;
  }

  private async play(i: number): Promise<void> {
    const m = this.list[i]!;
    this.digits.clear();
    await this.say(`${m.folder === 'new' ? 'New message' : 'Message'} ${i + 1}.`);
    await this.audio.file(m.filename, this.signal);
    if (m.folder === 'new') {
      const moved = await this.messages.move(this.box.customer_id, m.id, 'old');
      if (moved?.changed) {
        this.list[i] = moved.row;
        await messageChanged(this.svc, this.box, 'voicemail_message_updated', moved.row);
      }
    }
  }

  /** The message menu; a result ends the whole menu. */
  private async browse(): Promise<MenuResult | null> {
    await this.reload();
    if (this.list.length === 0) {
      await this.say('You have no messages.');
      return null;
    }
    let i = 0;
    await this.play(i);
    for (;;) {
      const k = await this.choose(PROMPT.message);
      if (k === '') return this.bye('timeout');
      if (k === '#') return this.bye('exit');
      if (k === '*') await this.say(PROMPT.messageHelp);
      else if (k === '1') await this.play((i = 0));
      else if (k === '5') await this.play(i);
      else if (k === '4' || k === '6') {
        const j = k === '4' ? i - 1 : i + 1;
        if (j < 0 || j >= this.list.length) await this.say('No more messages.');
        else await this.play((i = j));
      } else if (k === '7' || k === '9') {
        const m = this.list[i]!;
        if (k === '7') await this.remove(m);
        else await this.save(m);
        this.list.splice(i, 1);
        await this.say(k === '7' ? 'Message deleted.' : 'Message saved.');
        if (i >= this.list.length) {
          await this.say('No more messages.');
          return null;
        }
        await this.play(i);
      } else if (k === '3') {
        const a = await this.choose(PROMPT.advanced);
        if (a === '') return this.bye('timeout');
        if (a === '2') await this.callBack(this.list[i]!);
      } else await this.say('That is not a valid choice.');
    }
  }

  private async remove(m: VoicemailMessageRow): Promise<void> {
    await storageBackend(this.svc.config)
      .recordings.remove(m.filename)
      .catch((err: Error) => this.svc.logger.warn({ err: err.message, message: m.id }, 'voicemail audio not removed'));
    const gone = await this.messages.softDelete(this.box.customer_id, m.id);
    if (gone) await messageChanged(this.svc, this.box, 'voicemail_message_deleted', gone);
  }

  private async save(m: VoicemailMessageRow): Promise<void> {
    const moved = await this.messages.move(this.box.customer_id, m.id, 'old');
    if (moved?.changed) await messageChanged(this.svc, this.box, 'voicemail_message_updated', moved.row);
  }

  private async callBack(m: VoicemailMessageRow): Promise<void> {
    const to = callbackAddress(m);
    if (!to) return this.say('There is no number to call back.');
    await this.say('Calling.');
    const r = await this.call.connect({ destinations: [to], early_media: false, relay_reason: false, anonymous: 'auto' }, this.signal);
    if (!r.answered) await this.say('The call could not be completed.');
  }

  /** Mailbox options; a result ends the whole menu. */
  private async options(): Promise<MenuResult | null> {
    for (;;) {
      const k = await this.choose(PROMPT.options);
      if (k === '') return this.bye('timeout');
      if (k === '*' || k === '#') return null;
      if (k === '1') await this.greeting('unavailable');
      else if (k === '2') await this.greeting('busy');
      else if (k === '3') await this.greeting('name');
      else if (k === '5') await this.changePin();
      else await this.say('That is not a valid choice.');
    }
  }

  private async greeting(kind: GreetingKind): Promise<void> {
    await this.say(`Record your ${kind === 'name' ? 'name' : `${kind} message`} after the tone. Press pound when done.`);
    this.digits.clear();
    await this.audio.beep(this.signal);
    const filename = `vmg-${this.box.id}-${kind}-${newId()}.wav`;
    const r = await this.audio.record(filename, GREETING_MAX_SEC, this.signal);
    this.digits.clear();
    const files = storageBackend(this.svc.config).recordings;
    if (r.durationMs < MIN_MESSAGE_MS) {
      await files.remove(filename).catch(() => undefined);
      return this.say('Nothing was recorded.');
    }
    const before = this.box[`greeting_${kind}`];
    const updated = await voicemailBoxesRepo(this.svc.db).setGreeting(this.box.customer_id, this.box.id, kind, filename);
    if (updated) this.box = updated;
    if (before) await files.remove(before).catch(() => undefined);
    await this.say('Your greeting has been saved.');
  }

  private async changePin(): Promise<void> {
    await this.say('Please enter your new password, followed by the pound key.');
    const pin = await this.digits.read(10, KEY_TIMEOUT_MS, this.signal);
    if (!PIN_PATTERN.test(pin)) return this.say('That password is not valid. It must have 4 to 10 digits.');
    await this.say('Please enter your new password again, followed by the pound key.');
    const again = await this.digits.read(10, KEY_TIMEOUT_MS, this.signal);
    if (again !== pin) return this.say('The passwords do not match.');
    const r = await voicemailBoxesRepo(this.svc.db).update(this.box.customer_id, this.box.id, { pin });
    if (r && typeof r !== 'string') this.box = r;
    await this.say('Your password has been changed.');
  }
}

export async function voicemailMain(svc: VoicemailDeps, customerId: string, call: CallPort, o: { boxId: string; skipPin: boolean }, signal: AbortSignal): Promise<MenuResult> {
  const given = o.boxId ? await voicemailBoxesRepo(svc.db).get(customerId, o.boxId) : null;
  if (o.boxId && !given) return 'box_not_found';
  await call.answer(signal);
  const digits = new DigitQueue(call);
  try {
    const audio = new CallAudio(svc, call, given?.language ?? 'en-US', digits);
    const box = await login(svc, customerId, audio, digits, { box: given, skipPin: o.skipPin, caller: pinCaller(call.info.source) }, signal);
    if (typeof box === 'string') {
      await audio.say('Goodbye.', signal);
      await call.hangup('normal');
      return box;
    }
    return await new Menu(svc, box, call, new CallAudio(svc, call, box.language, digits), digits, signal).run();
  } finally {
    digits.close();
  }
}
