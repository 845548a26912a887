import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { SMTPServer } from 'smtp-server';
import { startSmtpReceiver } from '../../support/smtp';
import { freePort } from '../../../testkit/ports';
import { createMailer, verificationMail, passwordResetMail } from '../../../core/smtp';

/** Undo quoted-printable soft line breaks and '=' escapes (long link lines are wrapped by the encoder). */
function decodeQp(s: string): string {
  return s.replace(/=\r?\n/g, '').replace(/=3D/g, '=');
}

describe('core/smtp Mailer', () => {
  it('writes an .eml and a .txt with the link to the outbox when no SMTP_URL is set', async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'outbox-'));
    const mailer = createMailer({ from: 'noreply@example.test', outboxDir: dir });
    const token = 'a'.repeat(64);
    await mailer.send(verificationMail('http://127.0.0.1:9/', 'new@example.test', token, 24));
    const files = (await fs.readdir(dir)).sort();
    expect(files).to.have.length(2);
    const eml = await fs.readFile(
      path.join(
        dir,
        files.find((f) => f.endsWith('.eml'))!,
      ),
      'utf8',
    );
    const txt = await fs.readFile(
      path.join(
        dir,
        files.find((f) => f.endsWith('.txt'))!,
      ),
      'utf8',
    );
    expect(eml).to.match(/^To: new@example\.test$/m);
    expect(eml).to.match(/^Subject: Verify your email$/m);
    expect(decodeQp(eml)).to.contain(`http://127.0.0.1:9/console/verify?token=${token}`);
    expect(txt).to.contain(`http://127.0.0.1:9/console/verify?token=${token}`);
    expect(files[0]).to.contain('verification');
    await fs.rm(dir, { recursive: true });
  });

  it('delivers through SMTP to a real receiver on loopback when SMTP_URL is set', async () => {
    const smtp = await startSmtpReceiver();
    const received = smtp.received;
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'outbox-'));
    try {
      const mailer = createMailer({ smtpUrl: smtp.url, from: 'noreply@example.test', outboxDir: dir });
      const token = 'b'.repeat(64);
      await mailer.send(passwordResetMail('https://api.example.test', 'who@example.test', token, 1));
      await mailer.close();
      expect(received).to.have.length(1);
      expect(received[0].to).to.deep.equal(['who@example.test']);
      expect(decodeQp(received[0].data)).to.contain(`https://api.example.test/console/password-reset?token=${token}`);
      expect(await fs.readdir(dir)).to.have.length(0); // nothing went to the outbox
    } finally {
      await smtp.close();
      await fs.rm(dir, { recursive: true });
    }
  });

  it('rejects when the SMTP server refuses the recipient (the caller decides what to do)', async () => {
    const port = await freePort();
    const server = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS'],
      logger: false,
      onRcptTo(_addr, _s, cb) {
        cb(new Error('no such user'));
      },
    });
    await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
    try {
      const mailer = createMailer({ smtpUrl: `smtp://127.0.0.1:${port}?ignoreTLS=true`, from: 'a@example.test', outboxDir: '/nonexistent' });
      let err: unknown;
      try {
        await mailer.send(passwordResetMail('http://x', 'x@example.test', 'c'.repeat(64), 1));
      } catch (e) {
        err = e;
      }
      expect(err).to.be.instanceOf(Error);
      await mailer.close();
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});
