import { UsageError } from './cli-error.js';
import { isoDate } from './flag-values.js';
import { parseCommandLine } from './parse-command-line.js';

describe('parseCommandLine', () => {
  it('collects a repeatable flag into a list and takes --flag=value', () => {
    const line = parseCommandLine([
      'apps:create',
      '--owner=ada',
      '--name',
      'A',
      '--redirect-uri',
      'https://a.example/cb',
      '--redirect-uri=https://b.example/cb',
    ]);
    expect(line).toEqual({
      kind: 'run',
      command: 'apps:create',
      flags: { owner: 'ada', name: 'A', 'redirect-uri': ['https://a.example/cb', 'https://b.example/cb'] },
      passwordFromStdin: false,
    });
  });

  it('takes a value that starts with a single dash, such as a password', () => {
    const line = parseCommandLine(['users:set-password', '--username', 'ada', '--password', '-starts-with-a-dash']);
    expect(line).toMatchObject({ flags: { password: '-starts-with-a-dash' } });
  });

  it('accepts --password-stdin wherever a password is taken, in place of a required --password', () => {
    for (const command of ['users:create', 'users:set-password', 'seed:demo']) {
      const flags = command === 'users:create' ? ['--username', 'a', '--email', 'a@example.com', '--name', 'A'] : ['--username', 'a'];
      const line = parseCommandLine([command, ...(command === 'seed:demo' ? [] : flags), '--password-stdin']);
      expect(line).toMatchObject({ kind: 'run', command, passwordFromStdin: true });
      expect(line.kind === 'run' && 'password-stdin' in line.flags).toBe(false);
    }
    expect(() => parseCommandLine(['users:block', '--username', 'a', '--password-stdin'])).toThrow(UsageError);
  });

  it('reports every missing required flag at once, in the order of the help', () => {
    expect(() => parseCommandLine(['apps:create', '--name', 'A'])).toThrow(
      '--owner is required\n--redirect-uri is required\nRun "npm run cli -- apps:create --help" for its flags.',
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
