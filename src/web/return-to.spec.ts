import { safeReturnTo } from './return-to.js';

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
  ])('sends %j home instead', (value) => {
    expect(safeReturnTo(value, BASE)).toBe('/');
  });
});
