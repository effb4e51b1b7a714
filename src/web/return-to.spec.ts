import { RETURN_TO_MAX_LENGTH, safeReturnTo } from './return-to.js';

const BASE = 'https://agora.example.com';

describe('safeReturnTo', () => {
  it('keeps a local path with its query', () => {
    expect(safeReturnTo('/oauth/authorize?client_id=a&scope=openid%20api', BASE)).toBe('/oauth/authorize?client_id=a&scope=openid%20api');
  });

  it.each([
    'https://evil.example/',
    '//evil.example/path',
    '/\\evil.example',
    '\\\\evil.example',
    'javascript:alert(1)',
    '/\tevil',
    '',
    undefined,
    ['/a'],
    // Paths that only normalise to another site: decided on the normalised value.
    '/..//evil.example',
    '/.//evil.example',
    '/a/..//evil.example',
    '/%2e%2e//evil.example',
    '/%2E%2E//evil.example',
    '/%2e//evil.example',
    '/a/%2e%2e//evil.example',
    '/../..//evil.example/path?x=1',
    '/..%2f/evil.example',
    '/%5c%5cevil.example',
    '/%2f%2fevil.example',
    '/\u3000/evil',
    'http:/evil.example',
    '/..\\evil.example',
  ])('sends %j home instead, or stays on the site', (value) => {
    const result = safeReturnTo(value, BASE);
    // Whatever comes back, the browser resolving it as a Location stays on this site.
    expect(new URL(result, BASE).origin).toBe(BASE);
    expect(result.startsWith('//')).toBe(false);
  });

  it.each(['//evil.example/path', '/..//evil.example', '/%2e%2e//evil.example', '/a/..//x', '/.//x'])('refuses %j outright', (value) => {
    expect(safeReturnTo(value, BASE)).toBe('/');
  });

  it('keeps a long authorization request, and refuses what grows past the limit once percent-encoded', () => {
    const authorize = `/oauth/authorize?client_id=a&state=${'s'.repeat(1024)}&nonce=${'n'.repeat(1024)}&redirect_uri=${'r'.repeat(1500)}`;
    expect(safeReturnTo(authorize, BASE)).toBe(authorize);
    // 2,000 characters typed, 12,000 in the Location header.
    expect(safeReturnTo(`/${'é'.repeat(2000)}`, BASE)).toBe('/');
    expect(safeReturnTo(`/${'a'.repeat(RETURN_TO_MAX_LENGTH)}`, BASE)).toBe('/');
  });
});
