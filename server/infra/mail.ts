import nodemailer from 'nodemailer';

/**
 * Sends one plain-text mail through nodemailer's SMTP transport: a maintained
 * client that handles STARTTLS, authentication and the protocol's edge cases
 * we would otherwise hand-write. Short timeouts keep a dead server from
 * holding a worker. The one way the service sends mail (alerts, receipts).
 */
export async function sendMail(opts: { smtpUrl: string; from: string | { name: string; address: string }; to: string[]; subject: string; text: string }): Promise<void> {
  const transport = nodemailer.createTransport({ url: opts.smtpUrl, connectionTimeout: 10_000, greetingTimeout: 10_000, socketTimeout: 20_000 } as never);
  try {
    await transport.sendMail({ from: opts.from, to: opts.to, subject: opts.subject, text: opts.text });
  } finally {
    transport.close();
  }
}

/** What a failed send may record or log: the SMTP error code and reply code only, never the URL (it holds the password). */
export function mailFailureReason(err: unknown): string {
  const e = err as { code?: string; responseCode?: number };
  return `${e.code ?? 'error'}${e.responseCode ? ` ${e.responseCode}` : ''}`.slice(0, 200);
}
