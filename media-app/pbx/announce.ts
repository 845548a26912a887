/** The parking announcement: the slot, digit by digit, spoken by the platform's TTS to one party. */
import type { CallSession } from '../call/session';
import { slotWords } from './park';

/** Says "Parked on 7 0 1" to `call` and resolves when it was said (a TTS failure is logged, not thrown). */
export async function announceSlot(call: CallSession, slot: number): Promise<void> {
  const ep = call.endpoint;
  if (!ep || call.isEnded) return;
  await ep.say(`Parked on ${slotWords(slot)}`).catch((err: Error) => call.deps.logger.info({ err: err.message, call: call.id }, 'park announcement failed'));
}
