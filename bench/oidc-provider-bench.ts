// Runs the token endpoint's peer (oidc-provider-peer.ts) in its own process and exchanges its codes as the
// benchmark exchanges Agora's.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { freePort, load, LoadResult, startProcess, stopProcess } from './harness.js';
import { OtherWork, withOtherWork } from './machine-load.js';

export async function measureOidcProvider(options: {
  distBench: string;
  scratch: string;
  codes: number;
  connections: number;
  warmupSeconds: number;
  seconds: number;
  env: Record<string, string>;
}): Promise<{ result: LoadResult; other: OtherWork | undefined }> {
  const port = await freePort();
  const codesFile = join(options.scratch, `oidc-provider-codes-${port}.json`);
  const clientSecret = randomBytes(32).toString('base64url');
  const verifier = randomBytes(32).toString('base64url');
  const peer = await startProcess(
    'node',
    [join(options.distBench, 'oidc-provider-peer.js'), String(port), codesFile, String(options.codes)],
    { ...options.env, BENCH_CLIENT_SECRET: clientSecret, BENCH_VERIFIER: verifier },
    `http://127.0.0.1:${port}/.well-known/openid-configuration`,
  );
  try {
    const codes = JSON.parse(readFileSync(codesFile, 'utf8')) as string[];
    let next = 0;
    const form = (code: string) =>
      new URLSearchParams({
        grant_type: 'authorization_code',
        client_id: 'bench',
        client_secret: clientSecret,
        redirect_uri: 'http://localhost:4000/cb',
        code,
        code_verifier: verifier,
      }).toString();
    const loadOptions = {
      url: `http://127.0.0.1:${port}/token`,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      connections: options.connections,
      pid: peer.pid!,
      setupRequest: (request: { body?: string }) => ({ ...request, body: form(codes[next++ % codes.length]!) }),
    };
    await load('node-oidc-provider (warm-up)', { ...loadOptions, seconds: options.warmupSeconds });
    const measured = await withOtherWork([peer.pid!], undefined, () =>
      load('node-oidc-provider 9, in memory', { ...loadOptions, seconds: options.seconds }),
    );
    if (next > codes.length) throw new Error('ran out of oidc-provider authorization codes: raise the count');
    return measured;
  } finally {
    await stopProcess(peer);
  }
}
