import { createSocket } from 'node:dgram';
import type { AddressInfo } from 'node:net';
import { isIP } from 'node:net';
import { dnsResolver, resolveTarget, targetProblem, type ResolveHost } from './target-resolution.js';

const never = new AbortController().signal;

const publicOnly = { allowHttp: false, allowPrivateTargets: false };
const onPremise = { allowHttp: false, allowPrivateTargets: true };

function answering(addresses: string[]): ResolveHost & { calls: number } {
  const resolve = Object.assign(
    async () => {
      resolve.calls++;
      return addresses.map((address) => ({ address, family: isIP(address) }));
    },
    { calls: 0 },
  );
  return resolve;
}

function failing(code: string): ResolveHost {
  return async (hostname) => {
    throw Object.assign(new Error(`getaddrinfo ${code} ${hostname}`), { code });
  };
}

describe('resolveTarget', () => {
  it('keeps every address of a name whose addresses are all public', async () => {
    const resolve = answering(['93.184.215.14', '2606:2800:21f:cb07:6820:80da:af6b:8b2c']);
    expect(await resolveTarget('hooks.example.com', publicOnly, resolve, never)).toEqual({
      addresses: [
        { address: '93.184.215.14', family: 4 },
        { address: '2606:2800:21f:cb07:6820:80da:af6b:8b2c', family: 6 },
      ],
    });
    expect(resolve.calls).toBe(1);
  });

  it('refuses a name with one address that is not public among public ones, without saying which address', async () => {
    expect(await resolveTarget('hooks.example.com', publicOnly, answering(['93.184.215.14', '10.1.2.3']), never)).toEqual({
      problem: 'hooks.example.com does not resolve to a public address',
    });
  });

  it('does not resolve a literal address', async () => {
    const resolve = answering(['10.0.0.1']);
    expect(await resolveTarget('8.8.8.8', publicOnly, resolve, never)).toEqual({ addresses: [{ address: '8.8.8.8', family: 4 }] });
    expect(await resolveTarget('::1', publicOnly, resolve, never)).toEqual({ problem: '::1 is a loopback address' });
    expect(resolve.calls).toBe(0);
  });

  it('lets private addresses through when the operator allows them', async () => {
    expect(await resolveTarget('receiver.internal', onPremise, answering(['10.0.0.7']), never)).toEqual({
      addresses: [{ address: '10.0.0.7', family: 4 }],
    });
  });

  it('refuses a cloud metadata address even when the operator allows private targets', async () => {
    expect(await resolveTarget('receiver.internal', onPremise, answering(['10.0.0.7', '169.254.169.254']), never)).toEqual({
      problem: 'receiver.internal does not resolve to an address webhooks may use',
    });
    expect(await resolveTarget('fd00:ec2::254', onPremise, answering([]), never)).toEqual({
      problem: 'fd00:ec2::254 is a cloud metadata address',
    });
  });

  it.each(['ENOTFOUND', 'ENODATA', 'EAI_AGAIN', 'ESERVFAIL', 'ETIMEOUT'])(
    'says the same of a name that did not resolve (%s) as of one with a private address',
    async (code) => {
      expect(await resolveTarget('hooks.example.com', publicOnly, failing(code), never)).toEqual({
        problem: 'hooks.example.com does not resolve to a public address',
      });
    },
  );

  it('refuses a name without addresses', async () => {
    expect(await resolveTarget('hooks.example.com', publicOnly, answering([]), never)).toEqual({
      problem: 'hooks.example.com does not resolve to a public address',
    });
  });
});

describe('targetProblem', () => {
  it('checks the URL before resolving anything', async () => {
    const resolve = answering(['93.184.215.14']);
    expect(await targetProblem('http://hooks.example.com/', publicOnly, { resolve })).toBe('the URL must start with https://');
    expect(resolve.calls).toBe(0);
  });

  it('does not resolve when private targets are allowed', async () => {
    const resolve = answering(['10.0.0.1']);
    expect(await targetProblem('https://hooks.example.com/', onPremise, { resolve })).toBeNull();
    expect(resolve.calls).toBe(0);
  });

  it('gives up on a resolver that does not answer in time, and tells it to stop', async () => {
    let aborted = false;
    const resolve: ResolveHost = (_host, signal) => {
      signal.addEventListener('abort', () => (aborted = true));
      return new Promise(() => undefined);
    };
    expect(await targetProblem('https://hooks.example.com/', publicOnly, { resolve, timeoutMs: 50 })).toBe(
      'hooks.example.com does not resolve to a public address',
    );
    expect(aborted).toBe(true);
  });
});

describe('dnsResolver', () => {
  it('cancels its queries at the deadline: a name server that never answers does not hold the resolution', async () => {
    const silent = createSocket('udp4');
    let queries = 0;
    silent.on('message', () => queries++);
    await new Promise<void>((resolve) => silent.bind(0, '127.0.0.1', resolve));
    try {
      const resolve = dnsResolver([`127.0.0.1:${(silent.address() as AddressInfo).port}`]);
      const deadline = new AbortController();
      const started = Date.now();
      const resolving = resolve('hooks.example.com', deadline.signal);
      setTimeout(() => deadline.abort(), 100);
      await expect(resolving).rejects.toMatchObject({ code: 'ECANCELLED' });
      // c-ares alone would wait 2 s, then 4 s more, before giving up.
      expect(Date.now() - started).toBeLessThan(1000);
      expect(queries).toBeGreaterThan(0);
    } finally {
      silent.close();
    }
  });
});
