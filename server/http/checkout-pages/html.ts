/**
 * A tiny, safe-by-default HTML builder: every value interpolated into an
 * `html` template is escaped unless it is itself the result of `html`. There is
 * no way to mark an arbitrary string as trusted, so brand names, references,
 * instructions and URLs can never inject markup.
 */

const SAFE = Symbol('safe-html');

export interface SafeHtml {
  readonly [SAFE]: true;
  readonly text: string;
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;', '`': '&#96;' };

export function escapeHtml(s: string): string {
  return s.replace(/[&<>"'`]/g, (c) => ESCAPES[c]!);
}

function isSafe(v: unknown): v is SafeHtml {
  return typeof v === 'object' && v !== null && (v as Record<symbol, unknown>)[SAFE] === true;
}

function render(v: unknown): string {
  if (v === null || v === undefined || v === false) return '';
  if (isSafe(v)) return v.text;
  if (Array.isArray(v)) return v.map(render).join('');
  return escapeHtml(String(v));
}

export function html(strings: TemplateStringsArray, ...values: unknown[]): SafeHtml {
  let out = strings[0]!;
  for (let i = 0; i < values.length; i++) out += render(values[i]) + strings[i + 1]!;
  return { [SAFE]: true, text: out };
}

/**
 * Only absolute http(s) URLs may become links (merchant URLs are validated at
 * creation too; this keeps `javascript:` and friends out whatever the source).
 */
export function safeHttpUrl(url: string | null | undefined): string | null {
  if (!url) return null;
  try {
    const u = new URL(url);
    return u.protocol === 'http:' || u.protocol === 'https:' ? u.toString() : null;
  } catch {
    return null;
  }
}
