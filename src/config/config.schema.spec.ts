import { randomBytes } from 'node:crypto';
import { ConfigError, loadConfig } from './config.schema.js';

function problems(env: Record<string, string>): string[] {
  try {
    loadConfig(env, '/srv/agora');
    return [];
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
}

describe('loadConfig', () => {
  it('applies the documented defaults', () => {
    const config = loadConfig({}, '/srv/agora');
    expect(config).toMatchObject({
      env: 'development',
      host: 'localhost',
      port: 3000,
      baseUrl: 'http://localhost:3000',
      secureCookies: false,
    });
    expect(config.database).toMatchObject({ url: undefined, dataDir: '/srv/agora/data', poolSize: 10, migrationsRun: true });
    expect(config.oauth).toEqual({ codeTtlMs: 60_000, accessTokenTtlMs: 3_600_000 });
  });

  it('derives BASE_URL from PORT when only the port is set', () => {
    expect(loadConfig({ PORT: '3456' }).baseUrl).toBe('http://localhost:3456');
  });

  it('drops a trailing slash from BASE_URL and sets Secure cookies for https', () => {
    const config = loadConfig({ BASE_URL: 'https://agora.example.com/' });
    expect(config.baseUrl).toBe('https://agora.example.com');
    expect(config.secureCookies).toBe(true);
  });

  it('names every bad variable', () => {
    expect(problems({ PORT: 'x', BASE_URL: 'ftp://a', OAUTH_CODE_TTL_SECONDS: '0' }).map((p) => p.split(':')[0])).toEqual([
      'PORT',
      'BASE_URL',
      'OAUTH_CODE_TTL_SECONDS',
    ]);
  });

  it('requires a real SECRET_KEY in production and accepts any random one', () => {
    expect(problems({ NODE_ENV: 'production' })[0]).toMatch(/^SECRET_KEY: is required in production/);
    expect(problems({ NODE_ENV: 'production', SECRET_KEY: 'short' })[0]).toMatch(/at least 32 characters/);
    expect(problems({ NODE_ENV: 'production', SECRET_KEY: 'change-me-change-me-change-me-change-me' })[0]).toMatch(/placeholder/);
    expect(problems({ NODE_ENV: 'production', SECRET_KEY: 'x'.repeat(40) })[0]).toMatch(/placeholder/);
    for (let i = 0; i < 300; i++) {
      expect(problems({ NODE_ENV: 'production', SECRET_KEY: randomBytes(32).toString('base64url') })).toEqual([]);
    }
  });
});
