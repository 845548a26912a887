import type { z } from 'zod';
import type * as media from '../../../core/flow/options/media';
import type { AmdResult, CallPort } from '../call-port';
import { type ActionContext, FlowTask, NEXT, type Outcome, requireCall } from './base';

/** What the live port adds to CallPort for AMD (the simulator's port has only amd()). */
interface AmdPort extends CallPort {
  amd(signal: AbortSignal): Promise<{ result: AmdResult; cause?: string; offsetMs?: number }>;
  waitForBeep?(timeoutMs: number, signal: AbortSignal): Promise<{ offsetMs: number } | null>;
}

/** How long a voicemail drop waits for the beep before speaking anyway. */
const BEEP_TIMEOUT_MS = 20_000;

/**
 * Answering-machine detection. Results: svc.amd.result (human, machine, notsure), svc.amd.cause
 * (app_amd's cause, e.g. LONGGREETING-2600-1500) and, kept for older flows, svc.call.amd_result.
 * On a machine, a voicemail drop (voicemail_text / voicemail_urls) waits for the beep, then speaks
 * (svc.amd.voicemail = dropped, svc.amd.beep = true|false); then machine_handle "hangup" hangs up
 * (reason amd) and "continue" (default) goes on. async: the flow goes on at once and all of this
 * happens when detection ends.
 */
export class Amd extends FlowTask<z.infer<typeof media.amd>> {
  async exec(ctx: ActionContext): Promise<Outcome> {
    const call = requireCall(ctx) as AmdPort;
    const o = this.option;
    const hangupOnMachine = o.machine_handle === 'hangup';
    const detect = async (): Promise<boolean> => {
      const r = await call.amd(ctx.signal);
      ctx.vars.set('svc.amd.result', r.result);
      ctx.vars.set('svc.amd.cause', r.cause ?? '');
      ctx.vars.set('svc.call.amd_result', r.result);
      ctx.note('amd_result', { result: r.result, cause: r.cause ?? '', offset_ms: r.offsetMs ?? 0 });
      if (r.result !== 'machine') return false;
      if (o.voicemail_text || o.voicemail_urls?.length) await this.dropVoicemail(ctx, call);
      if (hangupOnMachine) {
        await call.hangup('amd');
        return true;
      }
      return false;
    };
    if (o.async) {
      ctx.background('amd', detect());
      return NEXT;
    }
    return (await detect()) ? { kind: 'end', reason: 'call_hangup' } : NEXT;
  }

  private async dropVoicemail(ctx: ActionContext, call: AmdPort): Promise<void> {
    const o = this.option;
    const beep = call.waitForBeep ? await call.waitForBeep(BEEP_TIMEOUT_MS, ctx.signal) : null;
    ctx.vars.set('svc.amd.beep', beep ? 'true' : 'false');
    ctx.note('amd_beep', { heard: !!beep, offset_ms: beep?.offsetMs ?? 0 });
    if (o.voicemail_text) await call.talk({ text: o.voicemail_text, language: o.voicemail_language ?? 'en-US' }, ctx.signal);
    if (o.voicemail_urls?.length) await call.play(o.voicemail_urls, ctx.signal);
    ctx.vars.set('svc.amd.voicemail', 'dropped');
  }
}
