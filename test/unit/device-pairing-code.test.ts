import { describe, expect, it } from 'vitest';
import { generatePairingCode, hashPairingCode, normalizePairingCode, PAIRING_CODE_LENGTH } from '../../server/domain/devices/pairing-code.ts';

describe('generatePairingCode', () => {
  it('is two groups of five Crockford base32 symbols, normalising to itself without the dash', () => {
    for (let i = 0; i < 200; i++) {
      const code = generatePairingCode();
      expect(code).toMatch(/^[0-9A-HJKMNP-TV-Z]{5}-[0-9A-HJKMNP-TV-Z]{5}$/);
      expect(normalizePairingCode(code)).toBe(code.replace('-', ''));
    }
  });

  it('does not repeat', () => {
    const codes = new Set(Array.from({ length: 2000 }, generatePairingCode));
    expect(codes.size).toBe(2000);
  });
});

describe('normalizePairingCode', () => {
  it.each([
    ['ABCDE-FGHJK', 'ABCDEFGHJK'],
    ['abcde-fghjk', 'ABCDEFGHJK'],
    ['ABCDEFGHJK', 'ABCDEFGHJK'],
    [' abcde fghjk ', 'ABCDEFGHJK'],
    ['A-B-C-D-E-F-G-H-J-K', 'ABCDEFGHJK'],
    ['OOOOO-IIIII', '0000011111'],
    ['lllll-00000', '1111100000'],
  ])('%j -> %j', (input, expected) => {
    expect(normalizePairingCode(input)).toBe(expected);
  });

  it.each([[''], ['ABCDE'], ['ABCDE-FGHJKM'], ['ABCDE-FGHJU'], ['ABCDE-FGH*K'], ['ÄBCDE-FGHJK'], ['A'.repeat(40)]])('rejects %j', (input) => {
    expect(normalizePairingCode(input)).toBeNull();
  });

  it('has the documented length', () => {
    expect(PAIRING_CODE_LENGTH).toBe(10);
  });
});

describe('hashPairingCode', () => {
  it('is a stable SHA-256 hex digest that differs per code', () => {
    expect(hashPairingCode('ABCDEFGHJK')).toMatch(/^[0-9a-f]{64}$/);
    expect(hashPairingCode('ABCDEFGHJK')).toBe(hashPairingCode('ABCDEFGHJK'));
    expect(hashPairingCode('ABCDEFGHJK')).not.toBe(hashPairingCode('ABCDEFGHJM'));
  });
});
