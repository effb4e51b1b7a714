import { generateKeyPairSync, KeyObject } from 'node:crypto';

/**
 * The JWS algorithms Agora signs with (RFC 7518 §3.3, §3.4; RFC 8037 §3.1), each with a key of its own:
 * RS256 (RSA 2048), ES256 (ECDSA on P-256) and EdDSA (Ed25519). RS256 is every client's default, and what
 * ticket codes use.
 */
export const SIGNING_ALGS = ['RS256', 'ES256', 'EdDSA'] as const;
export type SigningAlg = (typeof SIGNING_ALGS)[number];

export const DEFAULT_SIGNING_ALG: SigningAlg = 'RS256';

export function isSigningAlg(value: unknown): value is SigningAlg {
  return typeof value === 'string' && (SIGNING_ALGS as readonly string[]).includes(value);
}

/** A public key as a JWK (RFC 7517), with the members its key type has. */
export interface PublicJwk {
  kty: string;
  kid: string;
  use: 'sig';
  alg: SigningAlg;
  /** RSA */
  n?: string;
  e?: string;
  /** EC and OKP */
  crv?: string;
  x?: string;
  /** EC */
  y?: string;
}

/** A new key pair for `alg`. */
export function generateSigningKeyPair(alg: SigningAlg): { publicKey: KeyObject; privateKey: KeyObject } {
  switch (alg) {
    case 'RS256':
      return generateKeyPairSync('rsa', { modulusLength: 2048 });
    case 'ES256':
      return generateKeyPairSync('ec', { namedCurve: 'P-256' });
    case 'EdDSA':
      return generateKeyPairSync('ed25519');
  }
}

/** The public key's JWK members (no kid, use or alg): what the JWKS publishes and the thumbprint hashes. */
export function publicJwkMembers(publicKey: KeyObject): Omit<PublicJwk, 'kid' | 'use' | 'alg'> {
  const jwk = publicKey.export({ format: 'jwk' });
  const { kty, n, e, crv, x, y } = jwk;
  if (!kty) throw new Error('A public key exported as a JWK without kty');
  return { kty, ...(n && { n }), ...(e && { e }), ...(crv && { crv }), ...(x && { x }), ...(y && { y }) };
}
