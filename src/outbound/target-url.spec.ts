import { urlProblem, type TargetPolicy } from './target-url.js';

const strict: TargetPolicy = { allowHttp: false, allowPrivateTargets: false };
const withHttp: TargetPolicy = { allowHttp: true, allowPrivateTargets: false };
const onPremise: TargetPolicy = { allowHttp: true, allowPrivateTargets: true };

describe('urlProblem', () => {
  it.each([
    'https://hooks.example.com/agora',
    'https://hooks.example.com:8443/agora?token=abc&x=1',
    'https://HOOKS.Example.com/',
    'https://receiver/', // a name without a dot: resolution decides
    'https://93.184.215.14/webhooks',
    'https://[2606:4700:4700::1111]/webhooks',
    'https://[::ffff:8.8.8.8]/',
    'https://xn--bcher-kva.example/', // an internationalised name, as typed in punycode
    'https://bücher.example/',
    'https://example.com/a@b', // an @ in the path is not a user name
    'https://example.com/?next=https://x@y',
    `https://example.com/${'a'.repeat(2048 - 'https://example.com/'.length)}`,
  ])('accepts %s', (url) => {
    expect(urlProblem(url, strict)).toBeNull();
  });

  it.each([
    ['http://hooks.example.com/', 'the URL must start with https://'],
    ['ftp://hooks.example.com/', 'the URL must start with https://'],
    ['file:///etc/passwd', 'the URL must start with https://'],
    ['gopher://127.0.0.1:6379/_', 'the URL must start with https://'],
    ['javascript:alert(1)', 'the URL must start with https://'],
    ['hooks.example.com/agora', 'not a valid URL'],
    ['', 'not a valid URL'],
    ['https://', 'not a valid URL'],
    ['https://exa mple.com/', 'not a valid URL'],
    [' https://hooks.example.com/', 'the URL starts or ends with spaces'],
    ['https://user:pass@hooks.example.com/', 'the URL must not contain a user name or password'],
    ['https://user@hooks.example.com/', 'the URL must not contain a user name or password'],
    ['https://@hooks.example.com/', 'the URL must not contain a user name or password'],
    ['https://hooks.example.com/#section', 'the URL must not contain a fragment (#…)'],
    ['https://hooks.example.com/#', 'the URL must not contain a fragment (#…)'],
    [`https://example.com/${'a'.repeat(2049 - 'https://example.com/'.length)}`, 'the URL is longer than 2048 characters'],
    ['https://127.0.0.1/', '127.0.0.1 is a loopback address'],
    ['https://127.1/', '127.0.0.1 is a loopback address'],
    ['https://2130706433/', '127.0.0.1 is a loopback address'],
    ['https://0x7f000001/', '127.0.0.1 is a loopback address'],
    ['https://017700000001/', '127.0.0.1 is a loopback address'],
    ['https://0.0.0.0:8080/', '0.0.0.0 is an unspecified address'],
    ['https://0/', '0.0.0.0 is an unspecified address'],
    ['https://10.0.0.1/', '10.0.0.1 is a private address'],
    ['https://169.254.169.254/latest/meta-data/', '169.254.169.254 is a link-local address'],
    ['https://[::1]/', '::1 is a loopback address'],
    ['https://[::]/', ':: is an unspecified address'],
    ['https://[::ffff:127.0.0.1]/', '::ffff:7f00:1 (127.0.0.1) is a loopback address'],
    ['https://[::ffff:7f00:1]/', '::ffff:7f00:1 (127.0.0.1) is a loopback address'],
    ['https://[0:0:0:0:0:ffff:a9fe:a9fe]/', '::ffff:a9fe:a9fe (169.254.169.254) is a link-local address'],
    ['https://[64:ff9b::10.0.0.1]/', '64:ff9b::a00:1 (10.0.0.1) is a private address'],
    ['https://[::127.0.0.1]/', '::7f00:1 is an IPv4-compatible address'],
    ['https://[fe80::1]/', 'fe80::1 is a link-local address'],
    ['https://[fd00::1]/', 'fd00::1 is a unique local address'],
    ['https://[2002:a00:1::1]/', '2002:a00:1::1 is a 6to4 address'],
    ['https://localhost/', 'localhost is a local name'],
    ['https://LOCALHOST:3000/', 'localhost is a local name'],
    ['https://localhost./', 'localhost. is a local name'],
    ['https://api.localhost/', 'api.localhost is a local name'],
    ['https://metadata.google.internal/computeMetadata/v1/', 'metadata.google.internal is a cloud metadata service'],
    ['https://metadata.google.internal./', 'metadata.google.internal. is a cloud metadata service'],
  ])('refuses %s: %s', (url, problem) => {
    expect(urlProblem(url, strict)).toBe(problem);
  });

  it('allows http:// only when the operator does', () => {
    expect(urlProblem('http://hooks.example.com/', withHttp)).toBeNull();
    expect(urlProblem('ftp://hooks.example.com/', withHttp)).toBe('the URL must start with https:// or http://');
    expect(urlProblem('http://127.0.0.1:8080/', withHttp)).toBe('127.0.0.1 is a loopback address');
  });

  it.each([
    'http://127.0.0.1:8080/',
    'http://[::1]:8080/',
    'https://localhost/',
    'http://169.254.169.253/',
    'http://10.0.0.1/',
    'http://[fd00::1]/',
  ])('allows %s when private targets are allowed', (url) => {
    expect(urlProblem(url, onPremise)).toBeNull();
  });

  it.each([
    ['http://169.254.169.254/latest/meta-data/', '169.254.169.254 is a cloud metadata address'],
    ['http://2852039166/', '169.254.169.254 is a cloud metadata address'],
    ['http://[::ffff:169.254.169.254]/', '::ffff:a9fe:a9fe is a cloud metadata address'],
    ['http://169.254.170.2/v2/credentials', '169.254.170.2 is a cloud metadata address'],
    ['http://[fd00:ec2::254]/', 'fd00:ec2::254 is a cloud metadata address'],
    ['https://metadata.google.internal/', 'metadata.google.internal is a cloud metadata service'],
    ['https://METADATA.google.internal./', 'metadata.google.internal. is a cloud metadata service'],
  ])('refuses the cloud metadata service %s even when private targets are allowed', (url, problem) => {
    expect(urlProblem(url, onPremise)).toBe(problem);
  });

  it('keeps the other checks when private targets are allowed', () => {
    expect(urlProblem('http://u:p@127.0.0.1/', onPremise)).toBe('the URL must not contain a user name or password');
    expect(urlProblem('http://127.0.0.1/#x', onPremise)).toBe('the URL must not contain a fragment (#…)');
    expect(urlProblem('http://127.0.0.1/', { allowHttp: false, allowPrivateTargets: true })).toBe('the URL must start with https://');
  });
});
