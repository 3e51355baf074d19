import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

/**
 * RFC 2047 encoded words back to text: Q (what nodemailer writes for a subject
 * with quotes or brackets) and B (its choice for mostly non-Latin text, a
 * Bangla subject). Adjacent words join without the white space between them,
 * their bytes decoded together (a character may be split across two words).
 */
function decodeWords(header: string): string {
  const word = /=\?UTF-8\?([QB])\?([^?]*)\?=/gi;
  const bytesOf = (kind: string, text: string) =>
    kind.toUpperCase() === 'B'
      ? Buffer.from(text, 'base64')
      : Buffer.from(text.replace(/_/g, ' ').replace(/=([0-9A-F]{2})/gi, (_h, hex: string) => String.fromCharCode(parseInt(hex, 16))), 'latin1');
  return header.replace(/(?:=\?UTF-8\?[QB]\?[^?]*\?=\s*)+/gi, (run) => {
    const trailing = /\s*$/.exec(run)![0];
    return Buffer.concat([...run.matchAll(word)].map((m) => bytesOf(m[1]!, m[2]!))).toString('utf8') + trailing;
  });
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
