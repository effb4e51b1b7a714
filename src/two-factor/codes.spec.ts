import { normaliseRecoveryCode } from './recovery-codes.service.js';
import { normaliseTotpCode } from './totp.service.js';

describe('codes as typed', () => {
  it('reads a recovery code in any case, with or without its dash or spaces', () => {
    expect(normaliseRecoveryCode('K7MPQ-3XW9A')).toBe('k7mpq-3xw9a');
    expect(normaliseRecoveryCode(' k7mpq 3xw9a ')).toBe('k7mpq-3xw9a');
    expect(normaliseRecoveryCode('k7mpq3xw9a')).toBe('k7mpq-3xw9a');
  });

  it('refuses what cannot be a recovery code: look-alike letters, wrong length', () => {
    expect(normaliseRecoveryCode('l7mpq-3xw9a')).toBeNull();
    expect(normaliseRecoveryCode('k7mpq-3xw9')).toBeNull();
    expect(normaliseRecoveryCode('')).toBeNull();
  });

  it('reads an authenticator code of six digits, spaces allowed', () => {
    expect(normaliseTotpCode('123 456')).toBe('123456');
    expect(normaliseTotpCode('12345')).toBeNull();
    expect(normaliseTotpCode('12345a')).toBeNull();
  });
});
