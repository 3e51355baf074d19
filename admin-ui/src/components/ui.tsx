import { useEffect, useRef, useState, type ButtonHTMLAttributes, type InputHTMLAttributes, type ReactNode, type SelectHTMLAttributes, type TextareaHTMLAttributes } from 'react';
import type { Mode } from '../../../contract/vocabulary.ts';
import { describeError } from '../api.ts';
import { formatDateTime } from '../format.ts';

/** Class names joined, falsy ones dropped. */
export function cx(...parts: Array<string | false | null | undefined>): string {
  return parts.filter(Boolean).join(' ');
}

type Variant = 'primary' | 'secondary' | 'danger' | 'ghost';
const VARIANTS: Record<Variant, string> = {
  primary: 'bg-indigo-700 text-white hover:bg-indigo-800 focus-visible:outline-indigo-700',
  secondary: 'bg-white text-slate-800 ring-1 ring-inset ring-slate-300 hover:bg-slate-50 focus-visible:outline-indigo-700',
  danger: 'bg-red-700 text-white hover:bg-red-800 focus-visible:outline-red-700',
  ghost: 'text-slate-700 hover:bg-slate-100 focus-visible:outline-indigo-700',
};

export function Button({ variant = 'secondary', busy, className, children, disabled, ...rest }: ButtonHTMLAttributes<HTMLButtonElement> & { variant?: Variant; busy?: boolean }) {
  return (
    <button
      type="button"
      {...rest}
      disabled={disabled || busy}
      className={cx(
        'inline-flex min-h-9 items-center justify-center gap-1.5 rounded-md px-3 py-1.5 text-sm font-medium focus-visible:outline-2 focus-visible:outline-offset-2 disabled:cursor-not-allowed disabled:opacity-50',
        VARIANTS[variant],
        className,
      )}
    >
      {busy ? <span className="size-3 animate-spin rounded-full border-2 border-current border-t-transparent" aria-hidden="true" /> : null}
      {children}
    </button>
  );
}

const TONES = {
  gray: 'bg-slate-100 text-slate-800',
  green: 'bg-green-100 text-green-900',
  amber: 'bg-amber-100 text-amber-900',
  red: 'bg-red-100 text-red-900',
  blue: 'bg-blue-100 text-blue-900',
  violet: 'bg-violet-100 text-violet-900',
} as const;
export type Tone = keyof typeof TONES;

export function Badge({ tone = 'gray', children }: { tone?: Tone; children: ReactNode }) {
  return <span className={cx('inline-flex items-center rounded px-1.5 py-0.5 text-xs font-medium whitespace-nowrap', TONES[tone])}>{children}</span>;
}

const STATUS_TONES: Record<string, Tone> = {
  completed: 'green', matched: 'green', answered: 'green', online: 'green', active: 'green', delivered: 'green', succeeded: 'green',
  awaiting_verification: 'amber', low_confidence: 'amber', balance_mismatch: 'red', pending: 'blue', processing: 'blue',
  failed: 'red', dead_letter: 'red', revoked: 'red', offline: 'red', expired: 'gray', no_match: 'gray', no_candidate: 'amber',
  duplicate: 'gray', money_out: 'violet', canceled: 'gray', retrying: 'amber',
};
export function StatusBadge({ status }: { status: string }) {
  return <Badge tone={STATUS_TONES[status] ?? 'gray'}>{status.replace(/_/g, ' ')}</Badge>;
}

export function ModeBadge({ mode }: { mode: Mode }) {
  return <Badge tone={mode === 'live' ? 'green' : 'violet'}>{mode}</Badge>;
}

export function Card({ title, actions, children, className }: { title?: ReactNode; actions?: ReactNode; children: ReactNode; className?: string }) {
  return (
    <section className={cx('min-w-0 rounded-lg bg-white shadow-sm ring-1 ring-slate-200', className)}>
      {title || actions ? (
        <header className="flex flex-wrap items-center justify-between gap-2 border-b border-slate-200 px-4 py-2.5">
          {title ? <h2 className="text-sm font-semibold text-slate-900">{title}</h2> : <span />}
          {actions ? <div className="flex flex-wrap gap-2">{actions}</div> : null}
        </header>
      ) : null}
      <div className="p-4">{children}</div>
    </section>
  );
}

export function PageTitle({ children, actions }: { children: ReactNode; actions?: ReactNode }) {
  return (
    <div className="mb-4 flex flex-wrap items-center justify-between gap-2">
      <h1 className="text-xl font-semibold text-slate-900">{children}</h1>
      {actions ? <div className="flex flex-wrap gap-2">{actions}</div> : null}
    </div>
  );
}

export function Loading({ what = 'Loading' }: { what?: string }) {
  return (
    <p className="flex items-center gap-2 py-4 text-sm text-slate-600" role="status">
      <span className="size-4 animate-spin rounded-full border-2 border-slate-400 border-t-transparent" aria-hidden="true" />
      {what}…
    </p>
  );
}

export function ErrorBox({ error, title }: { error: unknown; title?: string }) {
  if (!error) return null;
  return (
    <div role="alert" className="my-2 rounded-md border border-red-300 bg-red-50 px-3 py-2 text-sm text-red-900">
      {title ? <strong className="mr-1">{title}:</strong> : null}
      {describeError(error)}
    </div>
  );
}

export function Notice({ children, tone = 'green' }: { children: ReactNode; tone?: 'green' | 'amber' }) {
  return (
    <div role="status" className={cx('my-2 rounded-md border px-3 py-2 text-sm', tone === 'green' ? 'border-green-300 bg-green-50 text-green-900' : 'border-amber-300 bg-amber-50 text-amber-900')}>
      {children}
    </div>
  );
}

export function Empty({ children }: { children: ReactNode }) {
  return <p className="py-6 text-center text-sm text-slate-600">{children}</p>;
}

export function Field({ label, hint, children, htmlFor }: { label: string; hint?: string; children: ReactNode; htmlFor: string }) {
  return (
    <div className="flex flex-col gap-1">
      <label htmlFor={htmlFor} className="text-sm font-medium text-slate-800">
        {label}
      </label>
      {children}
      {hint ? <p className="text-xs text-slate-600">{hint}</p> : null}
    </div>
  );
}

const INPUT = 'block w-full rounded-md border border-slate-300 bg-white px-2.5 py-1.5 text-sm text-slate-900 placeholder:text-slate-500 focus:border-indigo-600 focus:outline-2 focus:outline-indigo-600/30';
export function Input(props: InputHTMLAttributes<HTMLInputElement>) {
  return <input {...props} className={cx(INPUT, props.className)} />;
}
export function Select(props: SelectHTMLAttributes<HTMLSelectElement>) {
  return <select {...props} className={cx(INPUT, 'pr-8', props.className)} />;
}
export function TextArea(props: TextareaHTMLAttributes<HTMLTextAreaElement>) {
  return <textarea {...props} className={cx(INPUT, props.className)} />;
}

/**
 * A modal on the native <dialog> (focus trap, Escape and the top layer come
 * from the browser): headless dialog libraries lock scrolling by injecting a
 * <style> element, which the console's CSP (`style-src 'self'`) refuses.
 */
export function Dialog({ open, title, onClose, children }: { open: boolean; title: string; onClose(): void; children: ReactNode }) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const d = ref.current;
    if (!d) return;
    if (open && !d.open) d.showModal();
    if (!open && d.open) d.close();
  }, [open]);
  return (
    <dialog
      ref={ref}
      onClose={onClose}
      aria-labelledby="dialog-title"
      className="m-auto w-[min(32rem,calc(100vw-2rem))] rounded-lg bg-white p-0 shadow-xl backdrop:bg-slate-900/40"
    >
      {open ? (
        <div className="p-4">
          <h2 id="dialog-title" className="mb-3 text-base font-semibold text-slate-900">
            {title}
          </h2>
          {children}
        </div>
      ) : null}
    </dialog>
  );
}

/**
 * A responsive table: scrolls sideways inside its own box on a phone instead of
 * squeezing columns or widening the page, and says so when it does (a column
 * cut at the screen's edge looked like the end of the table).
 */
export function Table({ head, children, label }: { head: ReactNode[]; children: ReactNode; label: string }) {
  const box = useRef<HTMLDivElement>(null);
  const [wider, setWider] = useState(false);
  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const check = () => setWider(el.scrollWidth > el.clientWidth + 1);
    check();
    const observer = new ResizeObserver(check);
    observer.observe(el);
    if (el.firstElementChild) observer.observe(el.firstElementChild);
    return () => observer.disconnect();
  }, []);
  return (
    <>
      {/* Focusable, so a keyboard user can scroll a table wider than a phone. `relative`
          keeps the visually hidden header text inside the box: positioned against the
          page it would widen the whole page by the table's width. */}
      <div
        ref={box}
        className="relative -mx-4 overflow-x-auto overscroll-x-contain focus-visible:outline-2 focus-visible:outline-indigo-600"
        tabIndex={0}
        role="region"
        aria-label={`${label} (scrolls sideways)`}
      >
        <table className="min-w-full text-left text-sm" aria-label={label}>
          <thead className="border-b border-slate-200 text-xs text-slate-600 uppercase">
            <tr>
              {head.map((h, i) => (
                <th key={i} scope="col" className="px-4 py-2 font-medium whitespace-nowrap">
                  {/* A column of buttons has no visible heading; a screen reader still names it. */}
                  {h === '' || h === null || h === undefined ? <span className="sr-only">Actions</span> : h}
                </th>
              ))}
            </tr>
          </thead>
          <tbody className="divide-y divide-slate-100">{children}</tbody>
        </table>
      </div>
      {wider ? (
        <p className="mt-1 text-right text-xs text-slate-600" data-testid="table-scroll-hint">
          More columns: scroll the table sideways →
        </p>
      ) : null}
    </>
  );
}
export function Td({ children, className }: { children?: ReactNode; className?: string }) {
  return <td className={cx('px-4 py-2 align-top', className)}>{children}</td>;
}

/** A moment with its time zone, through the console's one formatter (format.ts); "–" for null. */
export function time(iso: string | null | undefined): string {
  return formatDateTime(iso);
}

/** The `battery_low_percent` setting's default, used until the settings have loaded. */
export const BATTERY_LOW_DEFAULT = 15;

/**
 * A heartbeat's battery: flagged "low" in words (not only colour) at or below the
 * `battery_low_percent` setting while not charging, the rule of the overview's
 * low-battery count and of the `battery_low` alert.
 */
export function BatteryLevel({ level, charging, lowAt }: { level: number | null | undefined; charging: boolean | null | undefined; lowAt: number }) {
  if (level == null) return <>–</>;
  const low = level <= lowAt && !charging;
  return (
    <span className="inline-flex items-center gap-1.5" data-testid="battery">
      <span className={low ? 'font-semibold text-red-800' : undefined}>{`${level}%`}</span>
      {charging ? <span className="text-xs text-slate-600">charging</span> : null}
      {low ? (
        <span className="rounded bg-red-100 px-1.5 py-0.5 text-xs font-semibold text-red-900" title={`At or below ${lowAt}% and not charging`}>
          Low battery
        </span>
      ) : null}
    </span>
  );
}

/** How long ago, in words ("3 min ago"). */
export function ago(iso: string | null | undefined): string {
  if (!iso) return 'never';
  const s = Math.round((Date.now() - new Date(iso).getTime()) / 1000);
  if (s < 60) return 'just now';
  if (s < 3600) return `${Math.floor(s / 60)} min ago`;
  if (s < 86400) return `${Math.floor(s / 3600)} h ago`;
  return `${Math.floor(s / 86400)} d ago`;
}

/** "1 payment", "2 payments"; `plural` when it is not the word plus "s" ("1 delivery", "3 deliveries"). */
export function count(n: number, singular: string, plural = `${singular}s`): string {
  return `${n} ${n === 1 ? singular : plural}`;
}

/** A decimal-string amount with its currency, never through floating point. */
export function money(amount: string | null | undefined, currency?: string | null): string {
  if (amount == null) return '–';
  return currency ? `${amount} ${currency}` : amount;
}
