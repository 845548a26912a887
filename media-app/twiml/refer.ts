/**
 * A REFER sent to the far end of a call's own SIP leg (sip_refer, TwiML <Refer>; RFC 3515): the
 * REFER goes inside the call's dialog with Refer-To and Referred-By; a non-2xx answer is the end of
 * it (failed, with that status). After a 202 the implicit subscription's NOTIFYs carry a sipfrag of
 * the referred call's progress: the first final one (status >= 200) ends the wait (2xx: in-progress,
 * else failed, with the sipfrag's status); none within `timeoutMs`: failed, no code. Every NOTIFY of
 * the call is answered here: Event refer with a REFER of ours pending → 200; Event refer with none
 * → 481 (RFC 6665: no such subscription); other events → 200, as before this module.
 */
import type { Logger } from 'pino';
import type { CallSession } from '../call/session';
import { onInDialogRequest } from '../call/in-dialog';
import type { SrfRequest, SrfResponse } from '../kit/srf';

export type ReferStatus = 'in-progress' | 'failed';

export interface ReferOutcome {
  status: ReferStatus;
  /** The REFER's answer when refused, else the final sipfrag's status; '' when neither came. */
  sipCode: string;
  /** Why, for the trace: refused, notify, timeout, call_ended. */
  why: 'refused' | 'notify' | 'timeout' | 'no_dialog';
}

interface Pending {
  /** The sipfrag status of a NOTIFY of this subscription. */
  report(sipStatus: number): void;
}

const SIPFRAG = /^SIP\/2\.0\s+(\d{3})\b/;

export class ReferSender {
  private readonly pending = new Map<string, Pending>();

  constructor(private readonly logger: Logger) {}

  /** Answers the NOTIFYs of this node's calls (registered once per node, before its calls attach dialogs). */
  register(deps: object): void {
    onInDialogRequest<CallSession>(deps, 'notify', (call, req, res) => this.onNotify(call, req, res));
  }

  private onNotify(call: CallSession, req: SrfRequest, res: SrfResponse): void {
    const event = (req.get('Event') ?? '').split(';')[0]!.trim().toLowerCase();
    if (event !== 'refer') return void res.send(200);
    const p = this.pending.get(call.id);
    if (!p) return void res.send(481, 'Subscription Does Not Exist');
    res.send(200);
    const m = SIPFRAG.exec(String(req.body ?? '').trimStart());
    if (!m) {
      this.logger.info({ call: call.id }, 'REFER NOTIFY without a sipfrag status line: ignored');
      return;
    }
    p.report(Number(m[1]));
  }

  /** Sends the REFER and waits for its outcome (or `signal`: the flow was stopped, the call hung up). */
  async refer(call: CallSession, referTo: string, timeoutMs: number, signal: AbortSignal): Promise<ReferOutcome> {
    const dialog = call.dialog;
    if (!dialog || call.isEnded) return { status: 'failed', sipCode: '', why: 'no_dialog' };
    if (this.pending.has(call.id)) throw new Error('a REFER of this call is already waiting for its outcome');
    let settle: (o: ReferOutcome) => void = () => undefined;
    const outcome = new Promise<ReferOutcome>((r) => (settle = r));
    let accepted = false;
    const early: number[] = [];
    this.pending.set(call.id, {
      report: (s) => {
        // a NOTIFY can overtake the 202 (RFC 3515 2.4.4): kept until the REFER's answer is known
        if (!accepted) return void early.push(s);
        if (s >= 200) settle({ status: s < 300 ? 'in-progress' : 'failed', sipCode: String(s), why: 'notify' });
      },
    });
    let timer: NodeJS.Timeout | undefined;
    const onAbort = () => settle({ status: 'failed', sipCode: '', why: 'no_dialog' });
    signal.addEventListener('abort', onAbort, { once: true });
    try {
      const res = await dialog.request({ method: 'REFER', headers: { 'Refer-To': `<${referTo}>`, 'Referred-By': `<${dialog.local.uri}>` } });
      if (res.status < 200 || res.status >= 300) return { status: 'failed', sipCode: String(res.status), why: 'refused' };
      accepted = true;
      for (const s of early.splice(0)) this.pending.get(call.id)?.report(s);
      timer = setTimeout(() => settle({ status: 'failed', sipCode: '', why: 'timeout' }), timeoutMs);
      return await outcome;
    } finally {
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
      this.pending.delete(call.id);
    }
  }
}
