import { AllowedOrigins } from './allowed-origins.js';

describe('AllowedOrigins', () => {
  it('allows the scheme, host and port of an https redirect URI, and nothing else', () => {
    const origins = new AllowedOrigins(['https://spa.example.com/callback', 'https://app.example.net:8443/cb']);
    expect(origins.allows('https://spa.example.com')).toBe(true);
    expect(origins.allows('https://app.example.net:8443')).toBe(true);
    expect(origins.allows('https://app.example.net')).toBe(false);
    expect(origins.allows('http://spa.example.com')).toBe(false);
    expect(origins.allows('https://evil.example.com')).toBe(false);
    expect(origins.allows('null')).toBe(false);
  });

  it('allows a loopback IP registered without a port on any port, and with a port only on that port', () => {
    const origins = new AllowedOrigins(['http://127.0.0.1/callback', 'http://[::1]:8080/cb', 'http://localhost/cb']);
    expect(origins.allows('http://127.0.0.1:51234')).toBe(true);
    expect(origins.allows('http://127.0.0.1')).toBe(true);
    expect(origins.allows('http://[::1]:8080')).toBe(true);
    expect(origins.allows('http://[::1]:8081')).toBe(false);
    expect(origins.allows('http://localhost')).toBe(true);
    expect(origins.allows('http://localhost:3000')).toBe(false);
    expect(origins.allows('https://127.0.0.1:51234')).toBe(false);
    expect(origins.allows('http://127.0.0.1:51234/path')).toBe(false);
  });

  it('treats an explicit default port like a given port', () => {
    const origins = new AllowedOrigins(['http://127.0.0.1:80/cb']);
    expect(origins.allows('http://127.0.0.1')).toBe(true);
    expect(origins.allows('http://127.0.0.1:9000')).toBe(false);
  });

  it('ignores private-use schemes and unparsable entries', () => {
    const origins = new AllowedOrigins(['com.example.app:/callback', 'not a url']);
    expect(origins.size).toBe(0);
    expect(origins.allows('null')).toBe(false);
  });
});
