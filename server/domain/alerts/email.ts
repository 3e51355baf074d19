import { sendMail } from '../../infra/mail.ts';
import { escapeControlCharacters } from '../../../contract/common/text.ts';

export interface AlertMail {
  id: number;
  brandId: number;
  type: string;
  subject: string;
  details: Record<string, unknown>;
  createdAt: Date;
}

/**
 * The mail an operator gets: the subject and the alert's details, which hold
 * only ids, counts, names and timestamps (see raise.ts), so no SMS text,
 * customer data or secrets can reach a mail box through here.
 *
 * Names come from devices, admins and forwarded SMS (a sender), some stored
 * before names were checked: every value is printed with its control
 * characters escaped, so a line break in one cannot forge a line of the mail
 * (another "Brand:" or "Raised at:") or of its subject.
 */
function renderAlertMail(alert: AlertMail): { subject: string; text: string } {
  const show = (v: unknown) => escapeControlCharacters(v === null ? '-' : String(v));
  const subject = show(alert.subject);
  const lines = [
    subject,
    '',
    `Alert: ${show(alert.type)} (#${alert.id})`,
    `Brand: ${alert.brandId}`,
    `Raised at: ${alert.createdAt.toISOString()}`,
    ...Object.entries(alert.details).map(([k, v]) => `${show(k)}: ${show(v)}`),
  ];
  return { subject: `[Paycollect alert] ${subject}`, text: `${lines.join('\n')}\n` };
}

/** Renders the alert and sends it (infra/mail.ts). */
export async function sendAlertMail(opts: { smtpUrl: string; from: string; to: string[]; mail: AlertMail }): Promise<void> {
  const { subject, text } = renderAlertMail(opts.mail);
  await sendMail({ smtpUrl: opts.smtpUrl, from: opts.from, to: opts.to, subject, text });
}
