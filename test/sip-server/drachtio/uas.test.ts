// drachtio-srf applications acting as UAS through our sip-server, against sipp as the caller.
import { expect } from 'chai';
import path from 'node:path';
import type { Dialog } from '../../../sip-server/drachtio/dialogs';
import { collectGarbage } from '../../../testkit/gc';
import { freePort } from '../../../testkit/ports';
import { SCENARIOS, SDP, sipp, until, type Server, useServerAndSrf } from './harness';

const scenario = (f: string) => path.join(SCENARIOS, f);

describe('drachtio-srf UAS through sip-server (sipp as caller)', function () {
  this.timeout(30000);
  let s: Server;
  let srf: any;

  useServerAndSrf((x, app) => ((s = x), (srf = app)));

  async function caller(args: string[], transport: 'u1' | 't1' = 'u1', opts = {}) {
    const port = await freePort();
    return sipp([...args, `127.0.0.1:${s.sipPort}`, '-i', '127.0.0.1', '-p', String(port), '-t', transport], opts).done;
  }

  for (const transport of ['u1', 't1'] as const) {
    it(`createUAS answers, sipp hangs up: 5 calls over ${transport === 'u1' ? 'UDP' : 'TCP'}`, async () => {
      const events: string[] = [];
      srf.invite(async (req: any, res: any) => {
        events.push(`invite:${req.protocol}`);
        const d = await srf.createUAS(req, res, { localSdp: SDP });
        d.on('ack', () => events.push('ack'));
        d.on('destroy', () => events.push('destroy'));
      });
      // -d 1000: a pause between ACK and BYE; srf defers its 'ack' event, and a BYE read in the same turn of
      // the event loop removes the dialog's listeners first (a stall of the loaded test process longer than the pause)
      const r = await caller(['-sn', 'uac', '-m', '5', '-r', '10', '-d', '1000', '-timeout', '15s'], transport);
      expect(r.code, r.errors).to.equal(0);
      await until(() => events.filter((e) => e === 'destroy').length === 5, 3000, 'destroy events');
      expect(events.filter((e) => e === `invite:${transport === 'u1' ? 'udp' : 'tcp'}`)).to.have.length(5);
      expect(events.filter((e) => e === 'ack')).to.have.length(5);
      expect(s.drachtio.engine.stats().dialogs).to.equal(0);
    });
  }

  it('res.send(486) rejects; sipp sees 486 and ACKs it', async () => {
    let seen = 0;
    srf.invite((req: any, res: any) => {
      seen++;
      res.send(486);
    });
    const r = await caller(['-sf', scenario('uac-reject.xml'), '-m', '2', '-timeout', '10s']);
    expect(r.code, r.errors).to.equal(0);
    expect(seen).to.equal(2);
    expect(s.drachtio.engine.stats().dialogs).to.equal(0);
  });

  it('CANCEL before the answer: the app gets the cancel event, sipp gets 200 then 487', async () => {
    const results: unknown[] = [];
    srf.invite((req: any, res: any) => {
      req.on('cancel', () => results.push('cancel-event'));
      res.send(180);
      // never answers; createUAS would see 487 through the cancel
    });
    const r = await caller(['-sf', scenario('uac-cancel.xml'), '-m', '1', '-timeout', '10s']);
    expect(r.code, r.errors).to.equal(0);
    await until(() => results.length === 1, 2000, 'cancel event');
    expect(s.drachtio.engine.stats().pendingInbound).to.equal(0);
  });

  for (const transport of ['u1', 't1'] as const) {
    it(`the app hangs up (dialog.destroy): sipp receives the BYE and answers 200 (${transport === 'u1' ? 'UDP' : 'TCP'})`, async () => {
      const byeAnswered: number[] = [];
      srf.invite(async (req: any, res: any) => {
        const d = await srf.createUAS(req, res, { localSdp: SDP });
        d.once('ack', async () => {
          const bye = await d.destroy();
          byeAnswered.push(bye ? 1 : 0);
        });
      });
      const r = await caller(['-sf', scenario('uac-wait-bye.xml'), '-m', '2', '-timeout', '10s'], transport);
      expect(r.code, r.errors).to.equal(0);
      await until(() => byeAnswered.length === 2, 3000, 'BYE responses');
      expect(s.drachtio.engine.stats().dialogs).to.equal(0);
    });
  }

  it('INFO inside the dialog reaches dialog.on("info"); BYE ends it', async () => {
    const infos: string[] = [];
    let destroyed = false;
    srf.invite(async (req: any, res: any) => {
      const d = await srf.createUAS(req, res, { localSdp: SDP });
      d.on('info', (ireq: any, ires: any) => {
        infos.push(ireq.body);
        ires.send(200);
      });
      d.on('destroy', () => {
        destroyed = true;
      });
    });
    const r = await caller(['-sf', scenario('uac-info.xml'), '-m', '1', '-timeout', '10s']);
    expect(r.code, r.errors).to.equal(0);
    expect(infos).to.have.length(1);
    expect(infos[0]).to.include('Signal=5');
    expect(destroyed).to.equal(true);
  });

  it('a re-INVITE from the caller (hold) reaches dialog.on("hold"), is answered, and its ACK arrives', async () => {
    const events: string[] = [];
    srf.invite(async (req: any, res: any) => {
      const d = await srf.createUAS(req, res, { localSdp: SDP });
      d.on('hold', () => events.push('hold'));
      d.on('ack', (ack: any) => {
        events.push('ack');
        // the re-INVITE's ACK (CSeq 2): the caller sends its BYE only after this INFO (see the scenario)
        if (ack.get('CSeq') === '2 ACK') d.request({ method: 'INFO', headers: { 'Content-Type': 'text/plain' }, body: 'acked' }).catch(() => events.push('info-failed'));
      });
      d.on('destroy', () => events.push('destroy'));
    });
    const r = await caller(['-sf', scenario('uac-reinvite.xml'), '-m', '1', '-timeout', '10s']);
    expect(r.code, r.errors).to.equal(0);
    await until(() => events.includes('destroy'), 10_000, 'destroy').catch((e: Error) => {
      throw new Error(`${e.message}; events: ${events.join(',')}`);
    });
    expect(events).to.include('hold');
    expect(events.filter((e) => e === 'ack')).to.have.length(2); // the INVITE's and the re-INVITE's
    expect(events).to.not.include('info-failed');
  });

  it('REGISTER handled by srf.register middleware', async () => {
    const seen: string[] = [];
    srf.register((req: any, res: any) => {
      seen.push(req.get('Contact'));
      res.send(200, { headers: { Contact: `${req.get('Contact')};expires=3600`, Expires: '3600' } });
    });
    const r = await caller(['-sf', scenario('uac-register.xml'), '-m', '2', '-timeout', '10s']);
    expect(r.code, r.errors).to.equal(0);
    expect(seen).to.have.length(2);
    expect(seen[0]).to.match(/sip:sipp@127\.0\.0\.1/);
  });

  it('OPTIONS and MESSAGE outside a dialog are answered by the app', async () => {
    const got: string[] = [];
    srf.options((req: any, res: any) => {
      got.push('OPTIONS');
      res.send(200);
    });
    srf.message((req: any, res: any) => {
      got.push(`MESSAGE:${req.body.trim()}`);
      res.send(200);
    });
    const r = await caller(['-sf', scenario('uac-options-message.xml'), '-m', '1', '-timeout', '10s']);
    expect(r.code, r.errors).to.equal(0);
    expect(got).to.deep.equal(['OPTIONS', 'MESSAGE:hello from sipp']);
  });

  // The stack keeps each server transaction for 32 s after its final response (Timers J and L); an
  // ended call's dialog must not ride along (at 300 calls/s that was ~9,200 dialogs held).
  it('after ACK and BYE the dialog is collectable while the INVITE transaction lives on (Timer L)', async () => {
    const table = s.drachtio.engine.dialogs;
    const made: WeakRef<Dialog>[] = [];
    const add = table.add.bind(table);
    table.add = (d: Dialog) => {
      made.push(new WeakRef(d));
      add(d);
    };
    let ended = 0;
    srf.invite(async (req: any, res: any) => {
      const d = await srf.createUAS(req, res, { localSdp: SDP });
      d.on('destroy', () => {
        ended++;
      });
    });
    const r = await caller(['-sn', 'uac', '-m', '3', '-r', '10', '-d', '200', '-timeout', '15s']);
    expect(r.code, r.errors).to.equal(0);
    await until(() => ended === 3 && s.drachtio.engine.stats().dialogs === 0, 5000, 'the three calls ended');
    expect(made).to.have.length(3);
    // their INVITE transactions are still there, absorbing retransmissions (64 * T1)
    const servers = (s.stack as unknown as { table: { servers: Map<string, { isInvite: boolean; state: string }> } }).table.servers;
    expect([...servers.values()].filter((t) => t.isInvite && t.state === 'Accepted')).to.have.length(3);
    await collectGarbage();
    expect(
      made.filter((w) => w.deref() !== undefined),
      'dialogs still held',
    ).to.have.length(0);
  });
});
