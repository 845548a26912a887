import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { SMTPServer } from 'smtp-server';
import { truncateAll } from '../../../testkit/db';
import { freePort } from '../../../testkit/ports';
import { setRates } from '../../../core/billing/rates';
import { newId } from '../../../core/ids';
import { clock } from '../../../core/clock';
import { smtpTransport } from '../../../core/smtp/transport';
import { configureMessaging } from '../../../control-api/messaging/deps';
import { eventTypes, fixture, fund, request, settle, startHarness, type Harness } from './support';
import type { Fixture } from '../../../testkit/api';
import type { RecordingRow } from '../../../core/repos/recordings';
import { insertRecording } from '../../../testkit/recordings';

interface Received {
  from: string;
  to: string[];
  raw: string;
}

describe('messaging: email through a loopback SMTP server', function () {
  this.timeout(20_000);
  let h: Harness;
  let smtp: SMTPServer;
  const received: Received[] = [];
  let recordingsDir: string;

  before(async () => {
    h = await startHarness();
    setRates({ email: 1_000 });
    recordingsDir = fs.mkdtempSync(path.join(os.tmpdir(), 'rec-'));
    const port = await freePort();
    smtp = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS', 'AUTH'],
      logger: false,
      onRcptTo(address, _session, cb) {
        if (address.address.startsWith('reject')) return cb(Object.assign(new Error('mailbox unavailable'), { responseCode: 550 }));
        cb();
      },
      onData(stream, session, cb) {
        const chunks: Buffer[] = [];
        stream.on('data', (c: Buffer) => chunks.push(c));
        stream.on('end', () => {
          received.push({
            from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
            to: session.envelope.rcptTo.map((r) => r.address),
            raw: Buffer.concat(chunks).toString(),
          });
          cb();
        });
      },
    });
    await new Promise<void>((resolve) => smtp.listen(port, '127.0.0.1', resolve));
    configureMessaging(h.t.ctx, { transport: smtpTransport(`smtp://127.0.0.1:${port}`), recordingsDir });
  });
  after(async () => {
    setRates(null);
    await new Promise<void>((resolve) => smtp.close(() => resolve()));
    fs.rmSync(recordingsDir, { recursive: true, force: true });
    await h.close();
  });
  beforeEach(async () => {
    await truncateAll();
    received.length = 0;
  });

  async function recording(f: Fixture, opts: { status?: RecordingRow['status']; file?: boolean } = {}): Promise<{ id: string; bytes: Buffer; filename: string }> {
    const id = newId();
    const filename = `${id}.wav`;
    const bytes = randomBytes(2000);
    if (opts.file !== false) fs.writeFileSync(path.join(recordingsDir, filename), bytes);
    await insertRecording(h.t.ctx.db, f.customer.id, id, filename, { status: opts.status ?? 'ended', tm_create: clock.now() });
    return { id, bytes, filename };
  }

  it('sends with a recording attached: the SMTP server receives it, status processed, charged, threaded, events', async () => {
    const f = await fixture(h);
    await fund(h, f, 100_000);
    const rec = await recording(f);
    const res = await request(h.server)
      .post('/v1.0/emails')
      .query({ accesskey: f.accesskey })
      .send({
        destinations: [
          { type: 'email', target: 'alice@example.test' },
          { type: 'email', target: 'bob@example.test' },
        ],
        subject: 'Your recording',
        content: 'Attached.',
        attachments: [{ reference_type: 'recording', reference_id: rec.id }],
      });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    expect(res.body.status).to.equal('initiated');
    await settle(h);
    expect(received).to.have.length(1);
    expect(received[0]!.to).to.have.members(['alice@example.test', 'bob@example.test']);
    expect(received[0]!.raw).to.match(/^Subject: Your recording/m);
    expect(received[0]!.raw).to.contain(`filename=${rec.filename}`);
    // The attachment body, base64 in the MIME part, is the file's bytes.
    const b64 = rec.bytes.toString('base64');
    expect(received[0]!.raw.replace(/\r?\n/g, '')).to.contain(b64.slice(0, 200));

    const got = (await request(h.server).get(`/v1.0/emails/${res.body.id}`).query({ accesskey: f.accesskey })).body;
    expect(got.status).to.equal('processed');
    expect(got.attachments).to.deep.equal([{ reference_type: 'recording', reference_id: rec.id }]);
    const bills = await h.t.ctx.db('billings').where({ reference_id: res.body.id });
    expect(bills.map((b) => [b.cost_type, Number(b.amount_credit)])).to.deep.equal([['email', -2_000]]);
    const convs = (await request(h.server).get('/v1.0/conversations').query({ accesskey: f.accesskey, type: 'email' })).body.result;
    expect(convs.map((c: { peer: { target: string } }) => c.peer.target)).to.have.members(['alice@example.test', 'bob@example.test']);
    const events = await eventTypes(h);
    const emailEvents = events.filter((e) => e.type.startsWith('email_'));
    expect(emailEvents.map((e) => [e.type, e.data.status])).to.deep.equal([
      ['email_created', 'initiated'],
      ['email_updated', 'processed'],
    ]);
  });

  it('a recipient the server refuses: status dropped', async () => {
    const f = await fixture(h);
    await fund(h, f, 100_000);
    const res = await request(h.server)
      .post('/v1.0/emails')
      .query({ accesskey: f.accesskey })
      .send({ destinations: [{ type: 'email', target: 'reject@example.test' }], subject: 's', content: 'c', attachments: [] });
    expect(res.status).to.equal(200);
    await settle(h);
    const got = (await request(h.server).get(`/v1.0/emails/${res.body.id}`).query({ accesskey: f.accesskey })).body;
    expect(got.status).to.equal('dropped');
    expect(received).to.have.length(0);
  });

  it('402 when the balance is short: nothing written, nothing sent', async () => {
    const f = await fixture(h);
    await fund(h, f, 1_500);
    const res = await request(h.server)
      .post('/v1.0/emails')
      .query({ accesskey: f.accesskey })
      .send({
        destinations: [
          { type: 'email', target: 'a@example.test' },
          { type: 'email', target: 'b@example.test' },
        ],
        subject: 's',
        content: 'c',
        attachments: [],
      });
    expect(res.status).to.equal(402);
    expect(res.body.error.reason).to.equal('INSUFFICIENT_BALANCE');
    await settle(h);
    for (const table of ['emails', 'conversations', 'conversation_messages']) {
      expect(Number((await h.t.ctx.db(table).count('* as n').first())?.n), table).to.equal(0);
    }
    expect(received).to.have.length(0);
  });

  it('bad input and other customers’ emails and recordings', async () => {
    const f = await fixture(h);
    const g = await fixture(h);
    await fund(h, f, 100_000);
    const theirs = await recording(g);
    const unfinished = await recording(f, { status: 'recording' });
    const missing = await recording(f, { file: false });
    const good = { destinations: [{ type: 'email', target: 'a@example.test' }], subject: 's', content: 'c', attachments: [] as unknown[] };
    const cases: [unknown, number, string][] = [
      [{ ...good, destinations: [{ type: 'email', target: 'not-an-address' }] }, 400, 'INVALID_ARGUMENT'],
      [{ ...good, destinations: [{ type: 'tel', target: '+15551234567' }] }, 400, 'INVALID_ARGUMENT'],
      [{ ...good, destinations: [] }, 400, 'INVALID_ARGUMENT'],
      [{ ...good, subject: 'two\r\nBcc: x@y.test' }, 400, 'INVALID_ARGUMENT'],
      [{ destinations: good.destinations, subject: 's', content: 'c' }, 400, 'INVALID_ARGUMENT'],
      [{ ...good, attachments: [{ reference_type: 'recording', reference_id: 'nope' }] }, 400, 'INVALID_ARGUMENT'],
      [{ ...good, attachments: [{ reference_type: 'file', reference_id: theirs.id }] }, 400, 'INVALID_ARGUMENT'],
      [{ ...good, attachments: [{ reference_type: 'recording', reference_id: theirs.id }] }, 404, 'RECORDING_NOT_FOUND'],
      [{ ...good, attachments: [{ reference_type: 'recording', reference_id: unfinished.id }] }, 400, 'INVALID_ARGUMENT'],
      [{ ...good, attachments: [{ reference_type: 'recording', reference_id: missing.id }] }, 400, 'INVALID_ARGUMENT'],
      [{ ...good, cc: [] }, 400, 'INVALID_ARGUMENT'],
    ];
    for (const [body, status, reason] of cases) {
      const r = await request(h.server)
        .post('/v1.0/emails')
        .query({ accesskey: f.accesskey })
        .send(body as object);
      expect(r.status, JSON.stringify(body)).to.equal(status);
      expect(r.body.error.reason, JSON.stringify(body)).to.equal(reason);
    }
    expect(Number((await h.t.ctx.db('emails').count({ n: '*' }).first())?.n)).to.equal(0);

    const mine = await request(h.server).post('/v1.0/emails').query({ accesskey: f.accesskey }).send(good);
    expect(mine.status).to.equal(200);
    await settle(h);
    expect((await request(h.server).get('/v1.0/emails/123').query({ accesskey: f.accesskey })).body.error.reason).to.equal('INVALID_ID');
    const cross = await request(h.server).get(`/v1.0/emails/${mine.body.id}`).query({ accesskey: g.accesskey });
    expect([cross.status, cross.body.error.reason]).to.deep.equal([404, 'EMAIL_NOT_FOUND']);
    expect((await request(h.server).delete(`/v1.0/emails/${mine.body.id}`).query({ accesskey: g.accesskey })).status).to.equal(404);
    expect((await request(h.server).get('/v1.0/emails').query({ accesskey: g.accesskey })).body.result).to.have.length(0);
    expect((await request(h.server).get('/v1.0/emails').query({ accesskey: f.accesskey })).body.result).to.have.length(1);
    expect((await request(h.server).delete(`/v1.0/emails/${mine.body.id}`).query({ accesskey: f.accesskey })).status).to.equal(200);
    expect((await request(h.server).get(`/v1.0/emails/${mine.body.id}`).query({ accesskey: f.accesskey })).status).to.equal(404);
  });
});
