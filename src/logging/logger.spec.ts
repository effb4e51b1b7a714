import { redactUrl, scrubLine } from './logger.js';

describe('redactUrl', () => {
  it('keeps the path and every parameter name, and the values of allow-listed parameters only', () => {
    expect(redactUrl('/oauth/authorize?response_type=code&client_id=abc&state=s3cret&code_challenge=xyz')).toBe(
      '/oauth/authorize?response_type=code&client_id=abc&state=[REDACTED]&code_challenge=[REDACTED]',
    );
  });

  it('replaces values of parameters no one thought of, and addresses that can carry a query of their own', () => {
    expect(redactUrl('/oauth/device?user_code=BCDF-GHJK')).toBe('/oauth/device?user_code=[REDACTED]');
    expect(redactUrl('/sign-in?return_to=%2Foauth%2Fdevice%3Fuser_code%3DBCDF-GHJK')).toBe('/sign-in?return_to=[REDACTED]');
    expect(redactUrl('/x?brand_new_secret=1')).toBe('/x?brand_new_secret=[REDACTED]');
  });

  it('replaces a bare value, and a name that is no plain name (a token sent as `?agora_pat_…`, encoded nonsense)', () => {
    expect(redactUrl('/api/user?agora_pat_0123456789012345678901234567890123456789abcdefghij')).toBe('/api/user?[REDACTED]');
    expect(redactUrl('/api/user?%ZZ=1&BCDF-GHJK')).toBe('/api/user?[REDACTED]&[REDACTED]');
    expect(redactUrl('/events?first=10&&after=abc')).toBe('/events?first=10&&after=abc');
  });

  it('leaves a URL without a query as it is', () => {
    expect(redactUrl('/graphql')).toBe('/graphql');
  });
});

describe('scrubLine', () => {
  it('replaces prefixed Agora secrets and JWTs anywhere in a line', () => {
    const token = `agora_pat_${'A1'.repeat(24)}b`;
    const jwt = 'eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.c2lnbmF0dXJl';
    expect(scrubLine(`{"msg":"Cannot query field \\"${token}\\"","url":"/x/${jwt}"}`)).toBe(
      '{"msg":"Cannot query field \\"[REDACTED]\\"","url":"/x/[REDACTED]"}',
    );
    expect(scrubLine('{"msg":"agora_run_12 prepared"}')).toBe('{"msg":"agora_run_12 prepared"}');
  });
});
