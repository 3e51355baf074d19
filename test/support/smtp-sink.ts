import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

/** RFC 2047 Q-encoded words (what nodemailer writes for a subject with quotes or brackets) back to text. */
function decodeWords(header: string): string {
  return header
    .replace(/\?=\s+=\?/g, '?==?')
    .replace(/=\?UTF-8\?Q\?([^?]*)\?=/gi, (_m, q: string) =>
      Buffer.from(q.replace(/_/g, ' ').replace(/=([0-9A-F]{2})/gi, (_h, hex: string) => String.fromCharCode(parseInt(hex, 16))), 'latin1').toString('utf8'),
    );
}

export interface ReceivedMail {
  /** The decoded Subject header. */
  subject: string;
  from: string;
  to: string[];
  /** Header block with folded lines unfolded. */
  headers: string;
  body: string;
  raw: string;
}

/**
 * A real SMTP server on a local port (smtp-server, the library nodemailer's
 * authors keep for this): the service's SMTP client talks the whole protocol
 * to it, including AUTH. `reject` makes it refuse messages with a 451.
 */
export async function startSmtpSink(auth: { user: string; pass: string }) {
  const mails: ReceivedMail[] = [];
  const state = { reject: false };
  const server = new SMTPServer({
    disabledCommands: ['STARTTLS'],
    allowInsecureAuth: true,
    logger: false,
    onAuth(a, _session, cb) {
      if (a.username === auth.user && a.password === auth.pass) cb(null, { user: a.username });
      else cb(new Error('Invalid username or password'));
    },
    onData(stream, session, cb) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        if (state.reject) {
          const err = new Error('try again later') as Error & { responseCode: number };
          err.responseCode = 451;
          cb(err);
          return;
        }
        const raw = Buffer.concat(chunks).toString('utf8');
        const split = raw.indexOf('\r\n\r\n');
        const headers = raw.slice(0, split).replace(/\r\n[ \t]+/g, ' ');
        mails.push({
          subject: decodeWords(/^Subject: (.*)$/im.exec(headers)?.[1] ?? ''),
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((r) => r.address),
          headers,
          body: raw.slice(split + 4),
          raw,
        });
        cb();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const port = (server.server.address() as AddressInfo).port;
  return {
    url: `smtp://${encodeURIComponent(auth.user)}:${encodeURIComponent(auth.pass)}@127.0.0.1:${port}`,
    mails,
    state,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
