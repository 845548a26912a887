/** A real SMTP receiver on loopback (smtp-server): every mail it accepts, with its recipients and raw text. */
import { SMTPServer } from 'smtp-server';
import { freePort } from '../../testkit/ports';

export interface ReceivedMail {
  to: string[];
  data: string;
}

export interface SmtpReceiver {
  /** `smtp://127.0.0.1:<port>?ignoreTLS=true`, for SMTP_URL. */
  url: string;
  received: ReceivedMail[];
  close(): Promise<void>;
}

export async function startSmtpReceiver(): Promise<SmtpReceiver> {
  const port = await freePort();
  const received: ReceivedMail[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onData(stream, session, cb) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        received.push({ to: session.envelope.rcptTo.map((r) => r.address), data: Buffer.concat(chunks).toString('utf8') });
        cb();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return {
    url: `smtp://127.0.0.1:${port}?ignoreTLS=true`,
    received,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** A mail's text with quoted-printable soft breaks and `=3D` undone (enough to read its links). */
export const mailText = (m: ReceivedMail): string => m.data.replace(/=\r?\n/g, '').replace(/=3D/g, '=');
