import { generateKeyPairSync } from 'node:crypto';
import { decodeProtectedHeader, jwtVerify } from 'jose';
import jwt from 'jsonwebtoken';
import { SigningThread } from './signing-thread.js';

describe('SigningThread', () => {
  const thread = new SigningThread();
  afterAll(() => thread.onModuleDestroy());

  it('signs RS256 tokens with the kid, verifiable with the public key, many at once and across keys', async () => {
    const first = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const second = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const tokens = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        i % 2 === 0
          ? thread.sign({ sub: `u${i}` }, first.privateKey, { kid: 'k1', alg: 'RS256' })
          : thread.sign({ sub: `u${i}` }, second.privateKey, { kid: 'k2', alg: 'RS256' }),
      ),
    );
    tokens.forEach((token, i) => {
      const { header, payload } = jwt.decode(token, { complete: true })!;
      expect(header).toEqual({ alg: 'RS256', kid: i % 2 === 0 ? 'k1' : 'k2' });
      expect(payload).toMatchObject({ sub: `u${i}` });
      expect(() => jwt.verify(token, (i % 2 === 0 ? first : second).publicKey, { algorithms: ['RS256'] })).not.toThrow();
    });
  });

  it('signs ES256 and EdDSA tokens, with a typ when asked', async () => {
    const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const ed = generateKeyPairSync('ed25519');
    const es256 = await thread.sign({ sub: 'a' }, ec.privateKey, { kid: 'ec', alg: 'ES256', typ: 'at+jwt' });
    const eddsa = await thread.sign({ sub: 'b' }, ed.privateKey, { kid: 'ed', alg: 'EdDSA' });
    expect(decodeProtectedHeader(es256)).toEqual({ alg: 'ES256', kid: 'ec', typ: 'at+jwt' });
    expect(decodeProtectedHeader(eddsa)).toEqual({ alg: 'EdDSA', kid: 'ed' });
    expect((await jwtVerify(es256, ec.publicKey, { algorithms: ['ES256'], typ: 'at+jwt' })).payload.sub).toBe('a');
    expect((await jwtVerify(eddsa, ed.publicKey, { algorithms: ['EdDSA'] })).payload.sub).toBe('b');
  });

  it('reports a failure instead of hanging', async () => {
    const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    await expect(thread.sign({ sub: 'x' }, privateKey, { kid: 'wrong-kind-of-key', alg: 'RS256' })).rejects.toThrow(/JWT signing failed/);
  });
});
