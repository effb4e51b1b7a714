import { generateKeyPairSync } from 'node:crypto';
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
        i % 2 === 0 ? thread.sign({ sub: `u${i}` }, first.privateKey, 'k1') : thread.sign({ sub: `u${i}` }, second.privateKey, 'k2'),
      ),
    );
    tokens.forEach((token, i) => {
      const { header, payload } = jwt.decode(token, { complete: true })!;
      expect(header).toMatchObject({ alg: 'RS256', kid: i % 2 === 0 ? 'k1' : 'k2' });
      expect(payload).toMatchObject({ sub: `u${i}` });
      expect(() => jwt.verify(token, (i % 2 === 0 ? first : second).publicKey, { algorithms: ['RS256'] })).not.toThrow();
    });
  });

  it('reports a failure instead of hanging', async () => {
    const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    await expect(thread.sign({ sub: 'x' }, privateKey, 'wrong-kind-of-key')).rejects.toThrow(/id_token signing failed/);
  });
});
