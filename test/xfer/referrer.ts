// Transferors that behave like the phones issue #32 met: a REFER, then NOTIFYs never answered or
// answered 481; targets that are busy or only ring; and the wall-clock time of a message in a sipp
// trace (to tell how long after the REFER the target's INVITE came).
import { expect } from 'chai';
import { callsRepo, type CallRow } from '../../core/repos/calls';
import { freePort, udpBound } from '../../testkit/ports';
import { RtpSink, sipp, until, type SippResult } from '../../testkit/media-app/harness';
import { ok200, respond } from '../../testkit/media-app/sipp-steps';
import { party, referRequest, TonePeer, type Stack } from './support';

/**
 * The transferor's phone: answers the platform's INVITE, sends REFER, and then treats the NOTIFYs as
 * `notify` says: 'silent' never answers one, '481' answers the first 481 (no other may follow),
 * 'ok' answers the first 200 (no other may follow: for a call that ends before the transfer does).
 * Then it takes the platform's BYE.
 */
export function referrer(o: { rtpPort: number; referTo: string; notify: 'silent' | '481' | 'ok'; referAfterMs?: number }): string {
  const invite = party({ rtpPort: o.rtpPort, referTo: o.referTo, referAfterMs: o.referAfterMs });
  // the INVITE, the answer, the REFER and its 202 as party() writes them; the NOTIFY handling is ours
  const head = invite.slice(0, invite.indexOf('<recv request="NOTIFY"/>'));
  const notifies = {
    silent: '<recv request="NOTIFY"/>',
    '481': `<recv request="NOTIFY"/>\n${respond('481 Subscription Does Not Exist')}`,
    ok: `<recv request="NOTIFY"/>\n${ok200}`,
  }[o.notify];
  return `${head}${notifies}\n<recv request="BYE" timeout="40000"/>\n${ok200}\n</scenario>`;
}

/**
 * The transferor's phone sends REFERs the platform must refuse, each with the status expected
 * (`referTo` null: no Refer-To header at all), and then takes the platform's BYE.
 */
export function badReferrer(rtpPort: number, refers: { referTo: string | null; status: number }[]): string {
  const full = party({ rtpPort, referTo: 'sip:unused@127.0.0.1' });
  const head = full.slice(0, full.indexOf('<pause'));
  const refer = (referTo: string | null, cseq: number) => referRequest(cseq, referTo === null ? '' : `Refer-To: ${referTo}\n`);
  const steps = refers.map((r, i) => `<pause milliseconds="300"/>\n${refer(r.referTo, 101 + i)}\n<recv response="${r.status}"/>`);
  return `${head}${steps.join('\n')}\n<recv request="BYE" timeout="40000"/>\n${ok200}\n</scenario>`;
}

/** A target that answers and then must get a BYE whose Reason header (RFC 3326) matches `reason` (a regexp). */
export function answersThenByeWithReason(rtpPort: number, reason: string): string {
  const full = party({ rtpPort, byeTimeoutMs: 40_000 });
  const bye = '<recv request="BYE" timeout="40000"/>';
  if (!full.includes(bye)) throw new Error('party() changed: no BYE step to check');
  return full.replace(
    bye,
    `<recv request="BYE" timeout="40000"><action><ereg regexp="${reason}" search_in="hdr" header="Reason:" check_it="true" assign_to="why"/><log message="Reason [$why]"/></action></recv>`,
  );
}

/** A target that refuses the call with 486 Busy Here. */
export function busyUas(): string {
  return `<?xml version="1.0" encoding="ISO-8859-1" ?>
<scenario name="busy">
<recv request="INVITE"/>
<send><![CDATA[
SIP/2.0 486 Busy Here
[last_Via:]
[last_From:]
[last_To:];tag=[pid]SIPpTag01[call_number]
[last_Call-ID:]
[last_CSeq:]
Content-Length: 0

]]></send>
<recv request="ACK"/>
</scenario>`;
}

/** The wall-clock time (ms) at which a sipp trace (-trace_msg) shows the first message starting with `start`, sent or received. */
export function traceTime(messages: string, direction: 'sent' | 'received', start: string): number {
  const blocks = messages.split(/^-{10,} /m);
  for (const b of blocks) {
    const m = /^(\d{4}-\d{2}-\d{2}) (\d{2}:\d{2}:\d{2})\.(\d{3})\d*\s*\n\s*\S+ message (sent|received)[^\n]*\n\s*\n?([^\n]*)/.exec(b);
    if (m && m[4] === direction && m[5]!.startsWith(start)) return new Date(`${m[1]}T${m[2]}.${m[3]}`).getTime();
  }
  throw new Error(`no ${start} ${direction} in the sipp trace:\n${messages.slice(0, 2000)}`);
}

export interface Connected {
  a: { done: Promise<SippResult> };
  c: { done: Promise<SippResult> };
  x: { done: Promise<SippResult> };
  xCall: CallRow;
  aRow: CallRow;
  sinkX: RtpSink;
  /** What A (the leg X's connect called) hears. */
  sinkA: RtpSink;
  cPort: number;
}

/**
 * The platform calls X (a sipp party at xPort) whose flow connects it to `user`@127.0.0.1:legPort;
 * resolves once X and that leg are both up.
 */
export async function connectXTo(s: Stack, xPort: number, legPort: number, user: string, what: string): Promise<{ xCall: CallRow; legRow: CallRow }> {
  const res = await s.api.post('/calls', {
    source: { type: 'tel', target: '+899100000002' },
    destinations: [{ type: 'sip', target: `x@127.0.0.1:${xPort}` }],
    actions: [{ type: 'connect', option: { destinations: [{ type: 'sip', target: `${user}@127.0.0.1:${legPort}` }] } }],
  });
  expect(res.status, JSON.stringify(res.body)).to.equal(200);
  const xCall = await until(
    async () => {
      const r = await callsRepo(s.t.ctx.db).get(res.body.calls[0].id);
      return r?.status === 'progressing' ? r : null;
    },
    20_000,
    'X up',
  );
  const legRow = await until(
    async () => {
      const r = (await s.t.ctx.db('calls').where({ master_call_id: xCall.id }).first()) as CallRow | undefined;
      return r && r.status === 'progressing' ? r : null;
    },
    20_000,
    what,
  );
  return { xCall, legRow };
}

/**
 * X (a sipp party the platform calls) connected by its flow to A (the transferor's phone, scenario
 * `aScenario(rtpPort, cPort)`); C is the target at cPort running `cScenario(tonePort)`.
 */
export async function connectedPair(s: Stack, open: { close(): void }[], aScenario: (rtp: number, cPort: number) => string, cScenario: (tonePort: number) => string): Promise<Connected> {
  const sinkX = await RtpSink.open();
  const sinkA = await RtpSink.open();
  const tone = await TonePeer.open();
  open.push(sinkX, sinkA, tone);
  const [px, pa, pc] = [await freePort(), await freePort(), await freePort()];
  const args = (p: number) => ['-i', '127.0.0.1', '-p', String(p), '-m', '1', '-timeout', '60s'];
  const x = sipp(party({ rtpPort: sinkX.port, byeTimeoutMs: 60_000 }), args(px), { killAfterMs: 70_000 });
  const a = sipp(aScenario(sinkA.port, pc), args(pa), { killAfterMs: 70_000 });
  const c = sipp(cScenario(tone.port), args(pc), { killAfterMs: 70_000 });
  await Promise.all([px, pa, pc].map((p) => udpBound(p))); // the three parties have bound their ports
  const { xCall, legRow: aRow } = await connectXTo(s, px, pa, 'a', 'A leg up');
  return { a, c, x, xCall, aRow, sinkX, sinkA, cPort: pc };
}
