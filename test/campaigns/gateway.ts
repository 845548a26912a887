/**
 * A tel gateway for campaign tests: a customer number, balance, a whitelist, and a provider + route
 * pointing at one sipp UAS on loopback that behaves per dialled number (the R-URI): the digit after
 * the prefix +1555300 picks it: 1 answers, 2 is busy (486), 3 never answers (rings until CANCEL),
 * 4 declines (603).
 */
import { sipProvider } from '../../testkit/providers';
import type { Fixture, TestApp } from '../../testkit/api';
import { freePort, sippMediaPort } from '../../testkit/ports';
import { sipp, SIPP_SDP, type SippResult, answerBye } from '../../testkit/media-app/harness';
import { addBalance, ensureBillingAccount } from '../../core/billing';
import { numbersRepo } from '../../core/repos/numbers';
import { routesRepo } from '../../core/repos/routes';

export const SOURCE_NUMBER = '+15550001111';
export const BEHAVIOURS = { answer: 1, busy: 2, noanswer: 3, decline: 4 } as const;
export type Behaviour = keyof typeof BEHAVIOURS;

/** The E.164 number sipp treats with `b` (n: 0-999 keeps numbers distinct). */
export const numberFor = (b: Behaviour, n: number) => `+1555300${BEHAVIOURS[b]}${String(n).padStart(3, '0')}`;

const reply = (status: string, extra: string, cseq = '[last_CSeq:]') => `SIP/2.0 ${status}
[last_Via:]
[last_From:]
[last_To:];tag=[pid]gw[call_number]
[last_Call-ID:]
${cseq}
${extra}`;

/** One UAS scenario, branching on the R-URI's user part. */
export function gatewayScenario(): string {
  const is = (b: Behaviour) => `<ereg regexp="^INVITE sip:[+]?1555300${BEHAVIOURS[b]}" search_in="msg" check_it="false" assign_to="${b}"/>`;
  return `<?xml version="1.0" encoding="ISO-8859-1" ?>
<scenario name="campaign gateway">
<recv request="INVITE" crlf="true"><action>${is('busy')}${is('noanswer')}${is('decline')}</action></recv>
<send><![CDATA[
${reply('180 Ringing', 'Contact: <sip:[local_ip]:[local_port]>\nContent-Length: 0\n')}
]]></send>
<nop next="busy" test="busy"/>
<nop next="noanswer" test="noanswer"/>
<nop next="decline" test="decline"/>
<send retrans="500"><![CDATA[
${reply('200 OK', `Contact: <sip:[local_ip]:[local_port]>\nContent-Type: application/sdp\nContent-Length: [len]\n\n${SIPP_SDP}`)}
]]></send>
<recv request="ACK"/>
${answerBye(30000)}
<nop next="end"/>
<label id="busy"/>
<send><![CDATA[
${reply('486 Busy Here', 'Content-Length: 0\n')}
]]></send>
<recv request="ACK"/>
<nop next="end"/>
<label id="decline"/>
<send><![CDATA[
${reply('603 Decline', 'Content-Length: 0\n')}
]]></send>
<recv request="ACK"/>
<nop next="end"/>
<label id="noanswer"/>
<recv request="CANCEL" timeout="30000"/>
<send><![CDATA[
${reply('200 OK', 'Content-Length: 0\n')}
]]></send>
<send><![CDATA[
${reply('487 Request Terminated', 'Content-Length: 0\n', 'CSeq: [cseq] INVITE')}
]]></send>
<recv request="ACK"/>
<label id="end"/>
</scenario>`;
}

/** Number, balance, whitelist, provider and route to a sipp gateway that takes `calls` INVITEs and exits. */
export async function startGateway(t: TestApp, f: Fixture, calls: number, killAfterMs = 80_000): Promise<{ done: Promise<SippResult> }> {
  await t.ctx.repos.outboundConfigs.update(f.outboundConfig.id, { destination_whitelist: ['us'] }, { customerId: f.customer.id });
  await numbersRepo(t.ctx.db).create({ customer_id: f.customer.id, number: SOURCE_NUMBER, type: 'normal' });
  const acc = await ensureBillingAccount(t.ctx.db, f.customer.id);
  await addBalance(t.ctx.db, acc.id, 100_000_000, `campaign-gw-${acc.id}`);
  const port = await freePort();
  const provider = await sipProvider(t.ctx.db, `127.0.0.1:${port}`, 'sipp-gw');
  await routesRepo(t.ctx.db).create({ customer_id: f.customer.id, name: 'all', detail: '', provider_id: provider.id, priority: 1, target: 'all' });
  const uas = sipp(
    gatewayScenario(),
    ['-i', '127.0.0.1', '-p', String(port), '-m', String(calls), '-mi', '127.0.0.1', '-mp', String(await sippMediaPort()), '-timeout', `${Math.ceil(killAfterMs / 1000)}s`],
    {
      killAfterMs,
    },
  );
  await uas.port;
  return { done: uas.done };
}
