import { exportJWK, generateKeyPair } from 'jose';
import { keySetProblem, validateClientAuthentication } from './client-keys.js';

const publicOnly = { allowPrivateTargets: false, allowHttp: false };

describe('validateClientAuthentication', () => {
  it('refuses a jwks_uri that is not public https, as webhooks refuse SSRF targets', async () => {
    for (const [uri, problem] of [
      ['http://keys.example/jwks.json', /https/],
      ['https://127.0.0.1/jwks.json', /loopback/],
      ['https://10.0.0.7/jwks.json', /private/],
      ['https://169.254.169.254/latest', /link-local|metadata/],
      ['https://localhost/jwks.json', /local name/],
      ['https://user:pw@keys.example/jwks.json', /user name or password/],
    ] as const) {
      await expect(
        validateClientAuthentication({ tokenEndpointAuthMethod: 'private_key_jwt', jwksUri: uri }, 'confidential', publicOnly),
      ).rejects.toMatchObject({ code: 'INVALID_KEYS', message: expect.stringMatching(problem) });
    }
    await expect(
      validateClientAuthentication(
        { tokenEndpointAuthMethod: 'private_key_jwt', jwksUri: 'https://keys.example/jwks.json' },
        'confidential',
        publicOnly,
      ),
    ).resolves.toEqual({ tokenEndpointAuthMethod: 'private_key_jwt', jwks: null, jwksUri: 'https://keys.example/jwks.json' });
  });

  it('allows a loopback http jwks_uri only where the operator allows private targets and http, never cloud metadata', async () => {
    const onPremise = { allowPrivateTargets: true, allowHttp: true };
    await expect(
      validateClientAuthentication(
        { tokenEndpointAuthMethod: 'private_key_jwt', jwksUri: 'http://127.0.0.1:8080/jwks' },
        'confidential',
        onPremise,
      ),
    ).resolves.toMatchObject({ jwksUri: 'http://127.0.0.1:8080/jwks' });
    await expect(
      validateClientAuthentication(
        { tokenEndpointAuthMethod: 'private_key_jwt', jwksUri: 'http://169.254.169.254/keys' },
        'confidential',
        onPremise,
      ),
    ).rejects.toMatchObject({ code: 'INVALID_KEYS' });
  });

  it('keeps methods to their client types: none for public, a secret or keys for confidential', async () => {
    await expect(validateClientAuthentication({}, 'public', publicOnly)).resolves.toEqual({
      tokenEndpointAuthMethod: 'none',
      jwks: null,
      jwksUri: null,
    });
    await expect(validateClientAuthentication({}, 'confidential', publicOnly)).resolves.toMatchObject({
      tokenEndpointAuthMethod: 'client_secret_basic',
    });
    await expect(validateClientAuthentication({ tokenEndpointAuthMethod: 'private_key_jwt' }, 'public', publicOnly)).rejects.toMatchObject({
      code: 'INVALID_AUTH_METHOD',
    });
    await expect(validateClientAuthentication({ tokenEndpointAuthMethod: 'none' }, 'confidential', publicOnly)).rejects.toMatchObject({
      code: 'INVALID_AUTH_METHOD',
    });
    await expect(
      validateClientAuthentication(
        { tokenEndpointAuthMethod: 'client_secret_post', jwksUri: 'https://keys.example/jwks' },
        'confidential',
        publicOnly,
      ),
    ).rejects.toMatchObject({ code: 'INVALID_KEYS' });
  });
});

describe('keySetProblem', () => {
  it('accepts public RSA, EC and OKP keys, and refuses private, symmetric, too many or malformed keys', async () => {
    const keys = await Promise.all(
      (['RS256', 'ES256', 'EdDSA'] as const).map(async (alg) => exportJWK((await generateKeyPair(alg, { extractable: true })).publicKey)),
    );
    expect(await keySetProblem({ keys })).toBeNull();
    const privateKey = await exportJWK((await generateKeyPair('ES256', { extractable: true })).privateKey);
    expect(await keySetProblem({ keys: [privateKey] })).toMatch(/private key/);
    expect(await keySetProblem({ keys: [{ kty: 'oct', k: 'AAAA' }] })).toMatch(/RSA, EC or OKP/);
    expect(await keySetProblem({ keys: Array(11).fill(keys[1]) })).toMatch(/at most 10/);
    expect(await keySetProblem({ keys: [{ ...keys[1], x: 'broken' }] })).toMatch(/not a usable public key/);
    expect(await keySetProblem({ keys: [{ ...keys[1], alg: 'HS256' }] })).toMatch(/alg HS256/);
    expect(await keySetProblem([])).toMatch(/JSON Web Key Set/);
  });
});
