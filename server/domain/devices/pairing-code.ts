import { randomInt } from 'node:crypto';
import { sha256Hex } from '../../infra/crypto/tokens.ts';

/**
 * Crockford base32: no I, L, O or U, so a code read aloud or typed from a
 * screen survives the usual confusions (normalisation maps O->0, I/L->1).
 */
const ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
/** 10 symbols of 5 bits: 50 bits, far beyond guessing within a code's short life. */
export const PAIRING_CODE_LENGTH = 10;
const CODE_RE = new RegExp(`^[${ALPHABET}]{${PAIRING_CODE_LENGTH}}$`);

/** A fresh code for display, grouped `ABCDE-FGHJK`. */
export function generatePairingCode(): string {
  let code = '';
  // randomInt draws without modulo bias.
  for (let i = 0; i < PAIRING_CODE_LENGTH; i++) code += ALPHABET[randomInt(ALPHABET.length)];
  return `${code.slice(0, 5)}-${code.slice(5)}`;
}

/** The canonical form of a typed code, or null when it cannot be one. */
export function normalizePairingCode(input: string): string | null {
  if (typeof input !== 'string' || input.length > 32) return null;
  const s = input
    .toUpperCase()
    .replace(/[\s-]/g, '')
    .replace(/O/g, '0')
    .replace(/[IL]/g, '1');
  return CODE_RE.test(s) ? s : null;
}

/** What is stored and looked up by; the code itself is shown once. */
export function hashPairingCode(normalized: string): string {
  return sha256Hex(`pairing-code:v1:${normalized}`);
}
