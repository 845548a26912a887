/**
 * What each call of a sipp caller lived through, read from its message trace (-trace_msg, the harness's
 * `SippResult.messages`): when its INVITE left and its 200 came (call set-up time), whether the platform
 * sent it a BYE (a hang-up nobody on the caller's side asked for), whether its own BYE got a 200.
 * For the chaos bench (scripts/bench/chaos) and the soak (testkit/reliability/soak.ts).
 */

export interface TracedCall {
  callId: string;
  /** ms since the epoch: the first INVITE sent, its first 200 received (0 when none) */
  inviteAt: number;
  answeredAt: number;
  /** the platform sent a BYE */
  byeFromPlatform: boolean;
  /** our BYE was answered 200 */
  ownByeAnswered: boolean;
  /** we sent a BYE */
  ownByeSent: boolean;
  /** the first final status to the INVITE (0 when none came) */
  inviteStatus: number;
}

/** sipp's block header: "----...---- 2026-11-26 03:34:46.350772" */
const HEADER = /^-{10,} (\d{4}-\d\d-\d\d) (\d\d:\d\d:\d\d\.\d+)\s*$/;

export function traceCalls(messages: string): Map<string, TracedCall> {
  const calls = new Map<string, TracedCall>();
  let at = 0;
  let block: string[] = [];
  const flush = () => {
    const text = block.join('\n');
    block = [];
    const kind = /message (sent|received)/.exec(text)?.[1];
    const start = text.indexOf('\n');
    if (!kind || start < 0) return;
    const body = text.slice(start + 1).trimStart();
    const callId = /^Call-ID:\s*(\S+)/im.exec(body)?.[1];
    if (!callId) return;
    const c = calls.get(callId) ?? { callId, inviteAt: 0, answeredAt: 0, byeFromPlatform: false, ownByeAnswered: false, ownByeSent: false, inviteStatus: 0 };
    calls.set(callId, c);
    const cseq = /^CSeq:\s*\d+\s+(\S+)/im.exec(body)?.[1] ?? '';
    if (kind === 'sent') {
      if (body.startsWith('INVITE ') && !c.inviteAt) c.inviteAt = at;
      if (body.startsWith('BYE ')) c.ownByeSent = true;
    } else if (body.startsWith('BYE ')) c.byeFromPlatform = true;
    else if (cseq === 'INVITE' && !c.inviteStatus && /^SIP\/2\.0 [2-6]\d\d/.test(body)) {
      c.inviteStatus = Number(body.slice(8, 11));
      if (c.inviteStatus === 200) c.answeredAt = at;
    } else if (cseq === 'BYE' && /^SIP\/2\.0 200/.test(body)) c.ownByeAnswered = true;
  };
  for (const line of messages.split('\n')) {
    const h = HEADER.exec(line);
    if (h) {
      flush();
      at = Date.parse(`${h[1]}T${h[2]!.slice(0, 12)}`); // local time, as sipp prints it
      continue;
    }
    block.push(line);
  }
  flush();
  return calls;
}

/** sipp's default Call-ID is "<call number>-<pid>@<ip>"; call n takes line n of the injection file. */
export function callIndex(callId: string): number {
  return Number(callId.split('-')[0]) - 1;
}
