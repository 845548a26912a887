// AMD as a product, end to end: POST /calls with the amd option dials a sipp UAS that answers and
// plays a pcap made at test time (espeak-ng/sox): a short "hello?" (a person) or a six-second
// greeting ending in a beep (an answering machine). Verdicts land in svc.amd.*; a machine is hung up
// (reason amd) or, with a voicemail drop, gets the message after the beep.
import { endedActiveflow } from '../../testkit/call-ends';
import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { answeringUas, killAllSipp, sipp, until } from '../../testkit/media-app/harness';
import { concat, espeak, silenceMs, soxSynth } from '../../testkit/media-engine/audio';
import { freePort, sippMediaPort } from '../../testkit/ports';
import { truncateAll } from '../../testkit/db';
import { createFixture } from '../../testkit/api';
import { writeRtpPcap } from './pcap';
import { api, startStack, type Stack } from '../../testkit/speech/support';

// Run on both media backends: the embedded engine, and fsmrf against our switch (esl/), where the
// engine's classifiers hear the caller through the switch's mod_audio_fork (media-server/fsmrf/amd-tap.ts).
for (const backend of ['embedded', 'fsmrf'] as const)
  describe(`AMD on outbound calls (sipp plays human and machine audio) on the ${backend} media backend`, function () {
    this.timeout(120_000);
    let s: Stack;
    let dir: string;
    let human: string;
    let machine: string;
    let beepAtMs: number;

    before(async () => {
      dir = fs.mkdtempSync(path.join(os.tmpdir(), 'amd-e2e-'));
      human = path.join(dir, 'human.pcap');
      writeRtpPcap(human, concat(silenceMs(400), espeak('hello?'), silenceMs(6000)));
      machine = path.join(dir, 'machine.pcap');
      const greeting = concat(silenceMs(300), espeak("Hi, you've reached Sam and Robin. We can't take your call right now. Please leave a message after the tone.", 'en-us', 175), silenceMs(300));
      beepAtMs = greeting.length / 8;
      writeRtpPcap(machine, concat(greeting, soxSynth(['0.6', 'sine', '1000'], ['vol', '0.4']), silenceMs(8000)));
      await truncateAll();
      s = await startStack({ EGRESS_ALLOW_CIDRS: '127.0.0.0/8' }, { mediaServer: backend });
    });
    after(async () => {
      killAllSipp();
      await s?.close();
      fs.rmSync(dir, { recursive: true, force: true });
    });

    async function dial(pcap: string, amd: Record<string, unknown>, actions: unknown[]) {
      const f = await createFixture(s.t.ctx);
      const port = await freePort();
      const scenario = answeringUas().replace('<recv request="ACK"/>', `<recv request="ACK"/>\n<nop><action><exec play_pcap_audio="${pcap}"/></action></nop>`);
      const callee = sipp(scenario, ['-i', '127.0.0.1', '-p', String(port), '-m', '1', '-mi', '127.0.0.1', '-mp', String(await sippMediaPort())], { killAfterMs: 45_000 });
      const r = await api(s.t, f).post('/calls', { source: { type: 'tel', target: '+15550001111' }, destinations: [{ type: 'sip', target: `callee@127.0.0.1:${port}` }], actions, amd });
      expect(r.status, JSON.stringify(r.body)).to.equal(200);
      const id = r.body.calls[0].id as string;
      const res = await callee.done;
      expect(res.code, res.errors + res.messages).to.equal(0);
      const db = s.t.ctx.db;
      const call = await until(
        async () => {
          const c = await db('calls').where({ id }).first();
          return c?.status === 'hangup' ? c : null;
        },
        20_000,
        'hangup',
      );
      const af = await endedActiveflow(call.activeflow_id);
      return { call, vars: af.variables as Record<string, string>, af };
    }

    it('a person saying "hello?" is human: the flow goes on (machine_handle hangup does nothing)', async () => {
      const { call, vars, af } = await dial(human, { machine_handle: 'hangup' }, [{ type: 'talk', option: { text: 'Hello, this is your reminder.' } }, { type: 'hangup' }]);
      expect(vars['svc.amd.result'], JSON.stringify(af.error)).to.equal('human');
      expect(vars['svc.amd.cause']).to.match(/^HUMAN-/);
      expect(vars['svc.call.amd_result']).to.equal('human');
      expect(call.hangup_reason).to.equal('normal');
      expect(call.hangup_by).to.equal('local');
      // the flow ran behind the amd action: its talk played after the verdict
      expect(call.tm_hangup!.getTime() - call.tm_progressing!.getTime()).to.be.greaterThan(2000);
    });

    it('a six-second greeting is a machine: machine_handle hangup ends the call with reason amd, before the flow', async () => {
      const { call, vars, af } = await dial(machine, { machine_handle: 'hangup' }, [{ type: 'talk', option: { text: 'This must never be played.' } }, { type: 'hangup' }]);
      expect(vars['svc.amd.result']).to.equal('machine');
      expect(JSON.stringify(af.executed_actions), 'sync: the flow waited for the verdict').to.not.match(/"type":"talk"/);
      expect(vars['svc.amd.cause']).to.match(/^(MAXWORDS|LONGGREETING)-/);
      expect(call.hangup_reason).to.equal('amd');
      // decided inside the greeting, not after it
      expect(call.tm_hangup!.getTime() - call.tm_progressing!.getTime()).to.be.below(beepAtMs);
    });

    it('async: the flow goes on at once (a long talk plays) and the machine is hung up when detection ends', async () => {
      const long = 'This is a long announcement that keeps going for quite a while, so that the detection ends while it still plays. '.repeat(3);
      const { call, vars, af } = await dial(machine, { machine_handle: 'hangup', async: true }, [{ type: 'talk', option: { text: long } }, { type: 'hangup' }]);
      expect(vars['svc.amd.result']).to.equal('machine');
      expect(JSON.stringify(af.executed_actions), 'the talk ran during detection').to.match(/"type":"talk"/);
      expect(call.hangup_reason).to.equal('amd');
      expect(call.tm_hangup!.getTime() - call.tm_progressing!.getTime()).to.be.below(beepAtMs);
    });

    it('voicemail drop: on a machine it waits for the beep, leaves the message, then hangs up', async () => {
      const text = 'Hello, this is the clinic calling to confirm your appointment tomorrow at nine.';
      const { call, vars } = await dial(machine, { machine_handle: 'hangup', voicemail_text: text }, [{ type: 'hangup' }]);
      expect(vars['svc.amd.result']).to.equal('machine');
      expect(vars['svc.amd.beep']).to.equal('true');
      expect(vars['svc.amd.voicemail']).to.equal('dropped');
      expect(call.hangup_reason).to.equal('amd');
      const messageMs = espeak(text, 'en-us', 165).length / 8;
      // the message started after the beep and played to its end
      expect(call.tm_hangup!.getTime() - call.tm_progressing!.getTime()).to.be.greaterThan(beepAtMs + messageMs * 0.8);
    });

    // the options' check is the API's, whatever the backend
    if (backend === 'embedded')
      it('bad amd options are refused (400) and nothing is dialled', async () => {
        const f = await createFixture(s.t.ctx);
        const base = { source: { type: 'tel', target: '+15550001111' }, destinations: [{ type: 'sip', target: 'callee@127.0.0.1:5999' }], actions: [{ type: 'hangup' }] };
        for (const amd of [{ machine_handle: 'explode' }, { async: 'yes' }, { beep: true }, 'on']) {
          const r = await api(s.t, f).post('/calls', { ...base, amd });
          expect(r.status, JSON.stringify(amd)).to.equal(400);
          expect(r.body.error.status).to.equal('INVALID_ARGUMENT');
        }
        expect((await s.t.ctx.db('calls').where({ customer_id: f.customer.id })).length).to.equal(0);
      });
  });
