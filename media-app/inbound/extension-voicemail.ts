/**
 * An extension's own voicemail destination (docs/pbx.md "The extension's voicemail"; migration
 * 0941): a call to the extension that is not answered within its `voicemail_timeout` (or finds no
 * registered phone) goes to its box with the unavailable greeting when `voicemail_on.no_answer`;
 * a busy phone (486/600) with the busy greeting when `voicemail_on.busy`. The call is answered by
 * the flow action `voicemail`, then hung up.
 */
import { parseActions } from '../../core/flow';
import type { Db } from '../../core/db/knex';
import { extensionsRepo } from '../../core/repos/extensions';
import { voicemailBoxesRepo } from '../../core/voicemail/boxes';
import type { CallFactory } from '../call/factory';
import type { CallSession } from '../call/session';

export interface ExtensionVoicemail {
  boxId: string;
  noAnswer: boolean;
  busy: boolean;
  timeoutMs: number;
}

/** The voicemail destination of extension `extension` of the customer, when it has one in force. */
export async function extensionVoicemail(db: Db, customerId: string, extension: string): Promise<ExtensionVoicemail | null> {
  const ext = await extensionsRepo(db).getByExtension(customerId, extension);
  if (!ext || (!ext.voicemail_on.no_answer && !ext.voicemail_on.busy)) return null;
  const box = await voicemailBoxesRepo(db).byExtension(customerId, ext.id);
  if (!box) return null;
  return { boxId: box.id, noAnswer: ext.voicemail_on.no_answer, busy: ext.voicemail_on.busy, timeoutMs: ext.voicemail_timeout * 1000 };
}

/** Which greeting a failed connect leads to, or null when the call is refused as before. */
export function voicemailGreeting(vm: ExtensionVoicemail, reason: string): 'busy' | 'unavailable' | null {
  if (reason === 'busy') return vm.busy ? 'busy' : null;
  return vm.noAnswer ? 'unavailable' : null;
}

/** Runs `voicemail` then `hangup` on the (unanswered) call; hung up when the flow cannot start. */
export async function toVoicemail(factory: CallFactory, call: CallSession, vm: ExtensionVoicemail, greeting: 'busy' | 'unavailable'): Promise<void> {
  const actions = parseActions([{ type: 'voicemail', option: { box_id: vm.boxId, greeting } }, { type: 'hangup' }]);
  await factory.runFlow(call, { actions }).catch(async (err: Error) => {
    factory.deps.logger.warn({ err: err.message, call: call.id }, 'voicemail flow did not start');
    await call.hangup('normal');
  });
}
