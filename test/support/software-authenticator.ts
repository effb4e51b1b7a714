import { isoCBOR } from '@simplewebauthn/server/helpers';
import { createHash, generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';

/** What a page hands the browser (the JSON `parseCreationOptionsFromJSON` / `parseRequestOptionsFromJSON` read). */
interface CreationOptions {
  challenge: string;
  rp: { id: string; name: string };
  user: { id: string; name: string };
  excludeCredentials?: { id: string }[];
}
interface RequestOptions {
  challenge: string;
  rpId: string;
  allowCredentials?: { id: string }[];
}

interface StoredCredential {
  id: string;
  privateKey: KeyObject;
  rpId: string;
  userHandle: string;
  counter: number;
}

const FLAG = { up: 0x01, uv: 0x04, be: 0x08, bs: 0x10, at: 0x40 } as const;

/**
 * A passkey authenticator in software, for tests: ES256 keys from node:crypto, "none" attestation, and
 * the authenticator data WebAuthn defines, so that the server's real verification runs on its answers.
 * `synced`: a multi-device (backed up) passkey, `swk`; otherwise bound to this device, `hwk`.
 * `verifiesUser`: whether it sets the UV flag (a PIN or biometric was checked).
 */
export class SoftwareAuthenticator {
  readonly credentials: StoredCredential[] = [];
  verifiesUser = true;

  constructor(
    private readonly origin: string,
    private readonly options: { synced?: boolean; counts?: boolean } = {},
  ) {}

  /** navigator.credentials.create(): a new discoverable credential, as `credential.toJSON()`. */
  create(options: CreationOptions): Record<string, unknown> {
    if (options.excludeCredentials?.some((c) => this.credentials.some((own) => own.id === c.id))) throw new Error('InvalidStateError');
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const id = randomBytes(32).toString('base64url');
    this.credentials.push({ id, privateKey, rpId: options.rp.id, userHandle: options.user.id, counter: 0 });
    const jwk = publicKey.export({ format: 'jwk' });
    const coseKey = new Map<number, number | Uint8Array>([
      [1, 2],
      [3, -7],
      [-1, 1],
      [-2, new Uint8Array(Buffer.from(jwk.x!, 'base64url'))],
      [-3, new Uint8Array(Buffer.from(jwk.y!, 'base64url'))],
    ]);
    const idBytes = Buffer.from(id, 'base64url');
    const length = Buffer.alloc(2);
    length.writeUInt16BE(idBytes.length);
    const attested = Buffer.concat([Buffer.alloc(16), length, idBytes, Buffer.from(isoCBOR.encode(coseKey))]);
    const authData = this.authenticatorData(options.rp.id, FLAG.at, 0, attested);
    const attestationObject = isoCBOR.encode(
      new Map<string, string | Uint8Array | Map<string, string>>([
        ['fmt', 'none'],
        ['attStmt', new Map<string, string>()],
        ['authData', new Uint8Array(authData)],
      ]),
    );
    return {
      id,
      rawId: id,
      type: 'public-key',
      authenticatorAttachment: 'platform',
      clientExtensionResults: {},
      response: {
        clientDataJSON: this.clientData('webauthn.create', options.challenge),
        attestationObject: Buffer.from(attestationObject).toString('base64url'),
        transports: ['internal'],
      },
    };
  }

  /** navigator.credentials.get(): an assertion by `credentialId`, or by its first credential for the RP. */
  get(options: RequestOptions, credentialId?: string): Record<string, unknown> {
    const allowed = options.allowCredentials?.map((c) => c.id);
    const credential = this.credentials.find(
      (c) => c.rpId === options.rpId && (credentialId ? c.id === credentialId : true) && (!allowed?.length || allowed.includes(c.id)),
    );
    if (!credential) throw new Error('NotAllowedError: no credential');
    if (this.options.counts) credential.counter += 1;
    const authData = this.authenticatorData(options.rpId, 0, credential.counter);
    const clientDataJSON = this.clientData('webauthn.get', options.challenge);
    const clientDataHash = createHash('sha256').update(Buffer.from(clientDataJSON, 'base64url')).digest();
    const signature = sign('sha256', Buffer.concat([authData, clientDataHash]), credential.privateKey);
    return {
      id: credential.id,
      rawId: credential.id,
      type: 'public-key',
      authenticatorAttachment: 'platform',
      clientExtensionResults: {},
      response: {
        clientDataJSON,
        authenticatorData: authData.toString('base64url'),
        signature: signature.toString('base64url'),
        userHandle: credential.userHandle,
      },
    };
  }

  private authenticatorData(rpId: string, extraFlags: number, counter: number, attested = Buffer.alloc(0)): Buffer {
    let flags = FLAG.up | extraFlags;
    if (this.verifiesUser) flags |= FLAG.uv;
    if (this.options.synced) flags |= FLAG.be | FLAG.bs;
    const count = Buffer.alloc(4);
    count.writeUInt32BE(counter);
    return Buffer.concat([createHash('sha256').update(rpId).digest(), Buffer.from([flags]), count, attested]);
  }

  private clientData(type: string, challenge: string): string {
    return Buffer.from(JSON.stringify({ type, challenge, origin: this.origin, crossOrigin: false })).toString('base64url');
  }
}
