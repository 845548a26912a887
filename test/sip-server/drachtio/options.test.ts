// OPTIONS answers carry Allow, Accept and Supported (issue #32 item 5), out of dialog (a monitoring
// probe, answered by media-app's srf.options) and inside a call (answered by the call's drachtio-srf
// dialog): sipp against sip-server and a media-app node on loopback.
import { usePlatform } from '../../../testkit/media-app/platform-hooks';
import { expect } from 'chai';
import { parseActions } from '../../../core/flow';
import { flowsRepo } from '../../../core/repos/flows';
import { numbersRepo } from '../../../core/repos/numbers';
import { testDb } from '../../../testkit/db';
import { sippMediaPort } from '../../../testkit/ports';
import { createExtension, sipp, type Platform } from '../../../testkit/media-app/harness';
import { callerPhone } from '../../../testkit/media-app/phones';

/** The headers of each 200 OK to OPTIONS that sipp logged receiving. */
function optionsAnswers(messages: string): Map<string, string>[] {
  const out: Map<string, string>[] = [];
  for (const block of messages.split(/-{10,}[^\n]*\n/)) {
    if (!/message received/.test(block) || !/\nSIP\/2\.0 200[^\n]*\n/.test(block) || !/\nCSeq:\s*\d+ OPTIONS/i.test(block)) continue;
    const headers = new Map<string, string>();
    for (const line of block.split('\n')) {
      const m = /^([A-Za-z-]+):\s*(.*?)\s*$/.exec(line);
      if (m) headers.set(m[1]!.toLowerCase(), m[2]!);
    }
    out.push(headers);
  }
  return out;
}

const list = (v: string | undefined): string[] =>
  (v ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);

const EXPECTED_ALLOW = ['INVITE', 'ACK', 'CANCEL', 'BYE', 'OPTIONS', 'PRACK', 'UPDATE', 'INFO', 'REFER', 'REGISTER', 'MESSAGE', 'SUBSCRIBE'];

describe('sip-server: OPTIONS answers carry Allow, Accept and Supported', function () {
  this.timeout(60_000);
  let p: Platform;

  usePlatform({}, (x) => (p = x));

  it('an out-of-dialog OPTIONS (a monitoring probe) gets them in its 200', async () => {
    const probe = `<?xml version="1.0" encoding="ISO-8859-1" ?>
<scenario name="probe">
<send retrans="500"><![CDATA[
OPTIONS sip:[remote_ip]:[remote_port] SIP/2.0
Via: SIP/2.0/[transport] [local_ip]:[local_port];branch=[branch]
From: <sip:monitor@[local_ip]:[local_port]>;tag=[call_number]
To: <sip:[remote_ip]:[remote_port]>
Call-ID: [call_id]
CSeq: 1 OPTIONS
Max-Forwards: 70
User-Agent: sipsak 0.9.8
Accept: application/sdp
Content-Length: 0

]]></send>
<recv response="200"/>
</scenario>`;
    for (const t of ['u1', 't1']) {
      const r = await sipp(probe, [`127.0.0.1:${p.sipPort}`, '-t', t, '-i', '127.0.0.1', '-m', '1']).done;
      expect(r.code, r.errors + r.messages).to.equal(0);
      const [h] = optionsAnswers(r.messages);
      expect(h, r.messages).to.not.equal(undefined);
      expect(list(h!.get('allow')), `${t}: Allow`).to.deep.equal(EXPECTED_ALLOW);
      expect(list(h!.get('accept')), `${t}: Accept`).to.deep.equal(['application/sdp', 'application/dtmf-relay', 'application/dtmf', 'text/plain']);
      expect(list(h!.get('supported')), `${t}: Supported`).to.deep.equal(['100rel', 'replaces', 'timer']);
    }
  });

  it('an OPTIONS inside a call gets them in its 200 too', async () => {
    const a = await createExtension();
    const db = await testDb();
    const flow = await flowsRepo(db).create({
      customer_id: a.customerId,
      actions: parseActions([{ type: 'answer' }, { type: 'sleep', option: { duration: 15_000 } }, { type: 'hangup' }]),
    });
    const number = `+1555${String(Date.now()).slice(-7)}`;
    await numbersRepo(db).create({ customer_id: a.customerId, number, type: 'normal', call_flow_id: flow.id });
    const inDialogOptions = `<send retrans="500"><![CDATA[
OPTIONS [next_url] SIP/2.0
Via: SIP/2.0/[transport] [local_ip]:[local_port];branch=[branch]
[last_From:]
[last_To:]
[routes]
Call-ID: [call_id]
CSeq: 3 OPTIONS
Max-Forwards: 70
Content-Length: 0

]]></send>
<recv response="200"/>`;
    const scenario = callerPhone(a.ext.username, a.domain, number, p.sipPort, { holdMs: 500 })
      .replace('<pause milliseconds="500"/>', `<pause milliseconds="500"/>\n${inDialogOptions}`)
      .replace('CSeq: 3 BYE', 'CSeq: 4 BYE');
    const r = await sipp(scenario, [`127.0.0.1:${p.sipPort}`, '-i', '127.0.0.1', '-m', '1', '-au', a.ext.username, '-ap', a.password, '-mi', '127.0.0.1', '-mp', String(await sippMediaPort())], {
      killAfterMs: 40_000,
    }).done;
    expect(r.code, r.errors + r.messages).to.equal(0);
    const answers = optionsAnswers(r.messages);
    expect(answers, r.messages).to.have.length(1);
    const h = answers[0]!;
    expect(h.get('to'), 'answered inside the dialog').to.match(/tag=/);
    expect(list(h.get('allow'))).to.deep.equal(EXPECTED_ALLOW);
    expect(list(h.get('accept'))).to.deep.equal(['application/sdp', 'application/dtmf-relay', 'application/dtmf', 'text/plain']);
    expect(list(h.get('supported'))).to.deep.equal(['100rel', 'replaces', 'timer']);
  });
});
