import { UsageError } from './cli-error.js';
import { isoDate } from './flag-values.js';
import { parseCommandLine } from './parse-command-line.js';

describe('parseCommandLine', () => {
  it('collects a repeatable flag into a list and takes --flag=value', () => {
    const line = parseCommandLine([
      'apps:create',
      '--user=ada',
      '--name',
      'A',
      '--redirect-uri',
      'https://a.example/cb',
      '--redirect-uri=https://b.example/cb',
    ]);
    expect(line).toEqual({
      kind: 'run',
      command: 'apps:create',
      flags: { user: 'ada', name: 'A', 'redirect-uri': ['https://a.example/cb', 'https://b.example/cb'] },
      passwordFromStdin: false,
      warnings: [],
    });
  });

  it('takes a value that starts with a single dash, such as a password', () => {
    const line = parseCommandLine(['users:set-password', '--user', 'ada', '--password', '-starts-with-a-dash']);
    expect(line).toMatchObject({ flags: { password: '-starts-with-a-dash' } });
  });

  it('accepts --password-stdin wherever a password is taken, in place of a required --password', () => {
    for (const command of ['users:create', 'users:set-password', 'seed:demo']) {
      const flags = command === 'users:create' ? ['--username', 'a', '--email', 'a@example.com', '--name', 'A'] : ['--user', 'a'];
      const line = parseCommandLine([command, ...(command === 'seed:demo' ? [] : flags), '--password-stdin']);
      expect(line).toMatchObject({ kind: 'run', command, passwordFromStdin: true });
      expect(line.kind === 'run' && 'password-stdin' in line.flags).toBe(false);
    }
    expect(() => parseCommandLine(['users:block', '--user', 'a', '--password-stdin'])).toThrow(UsageError);
  });

  it('reports every missing required flag at once, in the order of the help', () => {
    expect(() => parseCommandLine(['apps:create', '--name', 'A'])).toThrow(
      '--user is required\n--redirect-uri is required\nRun "npm run cli -- apps:create --help" for its flags.',
    );
  });

  it('names an existing user with --user everywhere, taking --username and --owner as former names with a warning', () => {
    for (const [command, former] of [
      ['users:set-email', 'username'],
      ['users:block', 'username'],
      ['users:unblock', 'username'],
      ['apps:list', 'owner'],
      ['apps:claim', 'owner'],
    ] as const) {
      const extra = command === 'users:set-email' ? ['--email', 'a@example.com'] : command === 'apps:claim' ? ['--id', 'x'] : [];
      expect(parseCommandLine([command, '--user', 'ada', ...extra])).toMatchObject({ flags: { user: 'ada' }, warnings: [] });
      const old = parseCommandLine([command, `--${former}=ada`, ...extra]);
      expect(old).toMatchObject({ flags: { user: 'ada' } });
      expect(old.kind === 'run' && old.warnings).toEqual([
        `warning: --${former} is deprecated for ${command}: use --user (--${former} still works for now)`,
      ]);
      expect(old.kind === 'run' && former in old.flags).toBe(false);
    }
    // users:create makes a new user: its --username is the new username, not a former name of --user.
    expect(() => parseCommandLine(['users:create', '--user', 'ada'])).toThrow(
      /^Unknown flag --user for users:create \(did you mean --username\?\)\n/,
    );
  });

  it('reports unknown flags, missing flags and bad values together, one line each', () => {
    expect(() =>
      parseCommandLine(['apps:create', '--bogus', '--owner', 'ada', '--user', 'bob', '--type', 'spa', '--scopes', 'admin']),
    ).toThrow(
      [
        'Unknown flag --bogus for apps:create',
        '--user may be given only once (--owner is the same flag)',
        '--name is required',
        '--redirect-uri is required',
        '--type: must be "confidential" or "public", not "spa"',
        '--scopes: unknown scope "admin"; the scopes are api, read_api, openid, profile, email, offline_access',
        'Run "npm run cli -- apps:create --help" for its flags.',
      ].join('\n'),
    );
  });
});

describe('isoDate', () => {
  it.each(['2027-01-31', '2027-01-31T18:00:00Z', '2027-01-31T18:00+02:00', '2028-02-29'])('accepts %s', (value) => {
    expect(isoDate(value)).toBeUndefined();
  });

  it.each([
    '2027-02-29',
    '2027-13-01',
    '31/01/2027',
    'tomorrow',
    '2027-01-31T25:00:00Z',
    '2027-01-31T18:00:00',
    '2027-02-30T10:00:00Z',
    '2027-04-31',
    '1',
  ])('refuses %s', (value) => {
    expect(isoDate(value)).toMatch(/is not a date/);
  });
});
