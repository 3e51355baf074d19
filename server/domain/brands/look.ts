import { createHash } from 'node:crypto';
import { AppError } from '../../../contract/common/errors.ts';
import { withAudit, type AuditActor } from '../audit/service.ts';
import type { Db } from '../db.ts';
import { deleteBrandLogoRow, lockBrandUuid, selectActiveBrandLogo, selectLogoHash, selectLogoMeta, selectPageBrandRow, upsertBrandLogo } from './queries.ts';

/**
 * A brand's look on the pages its customers read: logo, primary colour and
 * support contact (README, "Checkout languages and branding").
 *
 * The logo is stored in PostgreSQL (`brand_logos`, bytea) rather than in a
 * file: the service keeps no shared file store (server/infra/private-file.ts
 * writes one host's secret files), so a file would be missing on every other
 * instance and from the database backup the brand itself is in.
 */

/** Largest logo accepted. A checkout logo is shown 48 px high on a phone; 64 KB keeps the page quick on mobile data and fits the API's JSON body limit once base64-encoded. */
export const LOGO_MAX_BYTES = 64 * 1024;
export const LOGO_MIN_SIDE = 16;
export const LOGO_MAX_SIDE = 2048;
export const LOGO_TYPES = ['image/png', 'image/jpeg', 'image/webp'] as const;
export type LogoType = (typeof LOGO_TYPES)[number];

/** The service's own accent (checkout.css) when the brand has none. */
export const DEFAULT_PRIMARY = '#1f5eff';
const INK = '#14171f';
const WHITE = '#ffffff';

export interface PageBrand {
  name: string;
  uuid: string;
  logoUrl: string | null;
  primaryColor: string | null;
  supportPhone: string | null;
  supportEmail: string | null;
}

// ---------------------------------------------------------------------------
// Logo: the type from the file's own first bytes, never from its name or a declared type

export interface LogoInfo {
  contentType: LogoType;
  width: number;
  height: number;
}

function sniff(b: Buffer): LogoInfo | 'svg' | null {
  if (b.length >= 24 && b.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) && b.toString('latin1', 12, 16) === 'IHDR') {
    return { contentType: 'image/png', width: b.readUInt32BE(16), height: b.readUInt32BE(20) };
  }
  if (b.length >= 4 && b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff) {
    // Walk the marker segments to the frame header (SOFn, not DHT/JPG/DAC), which holds the size.
    let i = 2;
    while (i + 9 < b.length) {
      if (b[i] !== 0xff) return null;
      const marker = b[i + 1]!;
      if (marker === 0xff) { i++; continue; }
      const len = b.readUInt16BE(i + 2);
      if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) {
        return { contentType: 'image/jpeg', height: b.readUInt16BE(i + 5), width: b.readUInt16BE(i + 7) };
      }
      i += 2 + len;
    }
    return null;
  }
  if (b.length >= 30 && b.toString('latin1', 0, 4) === 'RIFF' && b.toString('latin1', 8, 12) === 'WEBP') {
    const chunk = b.toString('latin1', 12, 16);
    if (chunk === 'VP8 ') return { contentType: 'image/webp', width: b.readUInt16LE(26) & 0x3fff, height: b.readUInt16LE(28) & 0x3fff };
    if (chunk === 'VP8L' && b[20] === 0x2f) {
      const bits = b.readUInt32LE(21);
      return { contentType: 'image/webp', width: (bits & 0x3fff) + 1, height: ((bits >> 14) & 0x3fff) + 1 };
    }
    if (chunk === 'VP8X') return { contentType: 'image/webp', width: b.readUIntLE(24, 3) + 1, height: b.readUIntLE(27, 3) + 1 };
    return null;
  }
  const head = b.toString('utf8', 0, Math.min(b.length, 512)).trimStart().toLowerCase();
  if (head.startsWith('<svg') || (head.startsWith('<?xml') && head.includes('<svg'))) return 'svg';
  return null;
}

/**
 * PNG, JPEG or WebP by its magic bytes, at most LOGO_MAX_BYTES, each side
 * 16–2048 px. SVG is refused: it is a document that can carry script and
 * outside references, and sanitising it would be a second HTML sanitiser to keep.
 */
export function checkLogo(bytes: Buffer): LogoInfo {
  if (bytes.length > LOGO_MAX_BYTES) throw new AppError('BRAND_LOGO_TOO_LARGE', `The logo is ${bytes.length} bytes; at most ${LOGO_MAX_BYTES} are accepted`, { field: 'content_base64' });
  const info = sniff(bytes);
  if (info === 'svg') throw new AppError('BRAND_LOGO_UNSUPPORTED_TYPE', 'SVG logos are not accepted (they can carry script); upload a PNG, JPEG or WebP', { field: 'content_base64' });
  if (!info) throw new AppError('BRAND_LOGO_UNSUPPORTED_TYPE', undefined, { field: 'content_base64' });
  const { width, height } = info;
  if (width < LOGO_MIN_SIDE || height < LOGO_MIN_SIDE || width > LOGO_MAX_SIDE || height > LOGO_MAX_SIDE) {
    throw new AppError('BRAND_LOGO_BAD_DIMENSIONS', `The logo is ${width}×${height} px; each side must be ${LOGO_MIN_SIDE} to ${LOGO_MAX_SIDE} px`, { field: 'content_base64' });
  }
  return info;
}

/** Base64 as RFC 4648 writes it (padding optional); anything else is a VALIDATION_ERROR, not silently skipped characters. */
export function decodeLogo(base64: string): Buffer {
  const text = base64.replace(/\s+/g, '');
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(text) || text.length === 0) throw new AppError('VALIDATION_ERROR', 'content_base64 must be base64', { field: 'content_base64' });
  return Buffer.from(text, 'base64');
}

/** Where the logo is served: its hash in the path, so a new logo is a new URL and the old one may be cached for good. */
export function logoUrl(brandUuid: string, sha256: string): string {
  return `/checkout/brand-logos/${brandUuid}/${sha256.slice(0, 32)}`;
}

export interface BrandLogoMeta {
  url: string;
  content_type: LogoType;
  width: number;
  height: number;
  bytes: number;
  updated_at: string;
}

export async function setBrandLogoAudited(db: Db, who: AuditActor, brandId: number, base64: string): Promise<BrandLogoMeta> {
  const bytes = decodeLogo(base64);
  const info = checkLogo(bytes);
  const sha256 = createHash('sha256').update(bytes).digest('hex');
  return withAudit(db, who, async (tx) => {
    const brand = await lockBrandUuid(tx, brandId);
    if (!brand) throw new AppError('BRAND_NOT_FOUND');
    const before = await selectLogoHash(tx, brandId);
    const row = await upsertBrandLogo(tx, brandId, { content_type: info.contentType, content: bytes, sha256, width: info.width, height: info.height });
    return {
      result: { url: logoUrl(brand.uuid, sha256), content_type: info.contentType, width: info.width, height: info.height, bytes: bytes.length, updated_at: row.updated_at.toISOString() },
      audit: {
        action: 'brand.logo_set',
        targetType: 'brand',
        targetId: brandId,
        brandId,
        before: { logo_sha256: before?.sha256.slice(0, 16) ?? null },
        after: { logo_sha256: sha256.slice(0, 16), content_type: info.contentType, bytes: bytes.length },
      },
    };
  });
}

/** Removing a logo that is not there changes nothing and records nothing. */
export async function deleteBrandLogoAudited(db: Db, who: AuditActor, brandId: number): Promise<void> {
  await withAudit(db, who, async (tx) => {
    const brand = await lockBrandUuid(tx, brandId);
    if (!brand) throw new AppError('BRAND_NOT_FOUND');
    const gone = await deleteBrandLogoRow(tx, brandId);
    return {
      result: undefined,
      audit: gone ? { action: 'brand.logo_delete', targetType: 'brand', targetId: brandId, brandId, before: { logo_sha256: gone.sha256.slice(0, 16) }, after: { logo_sha256: null } } : null,
    };
  });
}

export async function getBrandLogoMeta(db: Db, brandId: number): Promise<BrandLogoMeta | null> {
  const r = await selectLogoMeta(db, brandId);
  if (!r) return null;
  return { url: logoUrl(r.uuid, r.sha256), content_type: r.content_type as LogoType, width: r.width, height: r.height, bytes: Number(r.bytes), updated_at: r.updated_at.toISOString() };
}

/** The logo to serve for `/checkout/brand-logos/{uuid}/{hash}`: only the current one, of an active brand. */
export async function findServedLogo(db: Db, brandUuid: string, hash: string): Promise<{ contentType: string; content: Buffer } | null> {
  if (!/^[0-9a-f-]{36}$/.test(brandUuid) || !/^[0-9a-f]{32}$/.test(hash)) return null;
  const r = await selectActiveBrandLogo(db, brandUuid);
  if (!r || r.sha256.slice(0, 32) !== hash) return null;
  return { contentType: r.content_type, content: Buffer.from(r.content) };
}

/** What a customer page shows of the brand. */
export async function selectPageBrand(db: Db, brandId: number): Promise<PageBrand> {
  const r = await selectPageBrandRow(db, brandId);
  return {
    name: r.name,
    uuid: r.uuid,
    logoUrl: r.sha256 ? logoUrl(r.uuid, r.sha256) : null,
    primaryColor: r.primary_color,
    supportPhone: r.support_phone,
    supportEmail: r.support_email,
  };
}

// ---------------------------------------------------------------------------
// Colour: WCAG 2.x relative luminance and contrast ratio

export const HEX_COLOR_RE = /^#[0-9a-fA-F]{6}$/;

function channels(hex: string): [number, number, number] {
  const n = parseInt(hex.slice(1), 16);
  return [(n >> 16) & 255, (n >> 8) & 255, n & 255];
}

/** WCAG 2.2 relative luminance (sRGB). */
export function relativeLuminance(hex: string): number {
  const [r, g, b] = channels(hex).map((c) => {
    const s = c / 255;
    return s <= 0.04045 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
  }) as [number, number, number];
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}

export function contrastRatio(a: string, b: string): number {
  const [l1, l2] = [relativeLuminance(a), relativeLuminance(b)].sort((x, y) => y - x) as [number, number];
  return (l1 + 0.05) / (l2 + 0.05);
}

/** The text colour on a button of this colour: white or ink, whichever reads better. */
export function textOn(hex: string): string {
  return contrastRatio(hex, WHITE) >= contrastRatio(hex, INK) ? WHITE : INK;
}

/**
 * The colour as text on the white card: itself when it reaches 4.5:1 (WCAG AA
 * for body text), else darkened step by step until it does, so links and
 * outlined buttons stay readable whatever colour the brand chose.
 */
export function readableOnWhite(hex: string): string {
  let [r, g, b] = channels(hex);
  let out = hex.toLowerCase();
  for (let i = 0; i < 40 && contrastRatio(out, WHITE) < 4.5; i++) {
    [r, g, b] = [r, g, b].map((c) => Math.floor(c * 0.92)) as [number, number, number];
    out = '#' + [r, g, b].map((c) => c.toString(16).padStart(2, '0')).join('');
  }
  return out;
}

/** The page's theme stylesheet for a colour (served from /checkout/theme/{rrggbb}.css: no inline style, the CSP stays `style-src 'self'`). */
export function themeCss(hex: string): string {
  const { background, ink } = buttonColors(hex);
  return `:root{--accent:${background};--accent-ink:${ink};--accent-text:${readableOnWhite(hex)};}\n`;
}

/**
 * The primary button: the brand's colour with white or ink text, whichever
 * contrasts more. A few mid-tones reach 4.5:1 with neither; those are darkened
 * (readableOnWhite) and carry white text.
 */
export function buttonColors(hex: string): { background: string; ink: string } {
  const c = hex.toLowerCase();
  const ink = textOn(c);
  return contrastRatio(c, ink) >= 4.5 ? { background: c, ink } : { background: readableOnWhite(c), ink: WHITE };
}
