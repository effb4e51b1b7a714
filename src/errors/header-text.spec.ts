import { cookieText, decodedHeader, formDecodedHeaderText } from './header-text.js';
import { UnstorableTextError } from './text-input.js';

describe('the header text boundary', () => {
  it('reads a header value as UTF-8 and refuses bytes that are not', () => {
    expect(decodedHeader(Buffer.from('tök', 'utf8').toString('latin1'), 'Private-Token', 10)).toBe('tök');
    expect(() => decodedHeader('\xff\xfe', 'Private-Token', 10)).toThrow(new UnstorableTextError('Private-Token', 'must be UTF-8 text'));
  });

  it('refuses decoded text that is too long or that the body boundary refuses', () => {
    expect(() => decodedHeader('a'.repeat(11), 'X', 10)).toThrow('X must be at most 10 characters');
    expect(() => formDecodedHeaderText('a%00b', 'client id', 10)).toThrow('client id must not contain the NUL character (U+0000)');
    expect(() => formDecodedHeaderText('%ED%A0%80', 'client id', 10)).toThrow('must be valid percent-encoding of UTF-8 text');
    expect(formDecodedHeaderText('a+b%2B', 'client id', 10)).toBe('a b+');
  });

  it('drops a cookie value that fails the boundary (read as no cookie), and decodes the rest', () => {
    expect(cookieText('abc%20d+e')).toBe('abc d+e');
    expect(cookieText('a%00b')).toBe('');
    expect(cookieText('%ED%A0%80')).toBe('');
    expect(cookieText('%zz')).toBe('');
    expect(cookieText('\xff')).toBe('');
    expect(cookieText('x'.repeat(5000))).toBe('');
  });
});
