import { UsersService } from '../users/users.service.js';
import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource, InjectRepository } from '@nestjs/typeorm';
import {
  generateAuthenticationOptions,
  generateRegistrationOptions,
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
  type AuthenticationResponseJSON,
  type RegistrationResponseJSON,
} from '@simplewebauthn/server';
import { randomUUID } from 'node:crypto';
import { DataSource, Repository } from 'typeorm';
import { Clock } from '../clock/clock.js';
import { APP_CONFIG } from '../config/config.module.js';
import type { AppConfig, WebAuthnRelyingParty } from '../config/config.schema.js';
import { SecurityNotices } from '../security-notices/security-notices.js';
import { RecoveryCodes } from '../two-factor/recovery-codes.service.js';
import { SecondFactors } from '../users/second-factors.js';
import type { AuthMethod } from '../auth/authentication-methods.js';
import { PasskeyEntity } from './passkey.entity.js';
import type { Passkey } from './passkey.model.js';
import { PasskeyError } from './passkeys.errors.js';
import { CHALLENGE_TTL_MS, WebAuthnChallenges } from './webauthn-challenges.js';
import type { ChallengePurpose } from './webauthn-challenge.entity.js';

/** The most passkeys one account may hold (GitHub allows a handful of security keys; this is plenty). */
export const MAX_PASSKEYS = 20;
export const PASSKEY_NAME_MAX = 64;
/** The longest credential, as JSON, a form may carry: a passkey's response is a few kilobytes at most. */
const CREDENTIAL_MAX_CHARS = 32_000;
/** What the browser waits for, in the options: the challenge's own life. */
const CEREMONY_TIMEOUT_MS = CHALLENGE_TTL_MS;

/** A passkey's answer that was verified: whose it is, and the method it counts as (RFC 8176). */
export interface VerifiedPasskey {
  userId: string;
  passkey: Passkey;
  /** `hwk` for a passkey bound to one device (a security key), `swk` for a synced one. */
  method: Extract<AuthMethod, 'hwk' | 'swk'>;
}

/** What an assertion is checked against: the challenge it must have signed, and whose passkeys may answer. */
interface AssertionContext {
  purpose: Exclude<ChallengePurpose, 'registration'>;
  boundTo: string;
  /** The user who must own the passkey (the second step); null for a sign-in with a passkey alone. */
  userId: string | null;
  /** A passkey alone must have verified its user; as a second step, its presence is enough. */
  requireUserVerification: boolean;
}

/**
 * Passkeys (WebAuthn credentials, @simplewebauthn/server): adding them to an account, naming and
 * removing them, and checking a passkey's answer for a sign-in, alone or as the second step. The options
 * for the browser are JSON that `PublicKeyCredential.parseCreationOptionsFromJSON` and
 * `parseRequestOptionsFromJSON` read; the browser answers with `credential.toJSON()`.
 */
@Injectable()
export class PasskeysService {
  private readonly rp: WebAuthnRelyingParty;

  constructor(
    @InjectRepository(PasskeyEntity) private readonly passkeys: Repository<PasskeyEntity>,
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly challenges: WebAuthnChallenges,
    private readonly notices: SecurityNotices,
    private readonly secondFactors: SecondFactors,
    private readonly recoveryCodes: RecoveryCodes,
    private readonly clock: Clock,
    @Inject(APP_CONFIG) config: AppConfig,
    private readonly users: UsersService,
  ) {
    this.rp = config.webAuthn;
  }

  async list(userId: string): Promise<Passkey[]> {
    const rows = await this.passkeys.find({ where: { userId }, order: { createdAt: 'ASC', id: 'ASC' } });
    return rows.map(toPasskey);
  }

  async find(userId: string, id: string): Promise<Passkey> {
    return toPasskey(await this.entity(userId, id));
  }

  /**
   * The options for adding a passkey, as JSON: a discoverable credential (it signs in without a
   * username) that must verify its user, none of the user's own passkeys again, and a challenge bound
   * to this session.
   */
  async registrationOptions(user: { id: string; username: string; name: string }, sessionId: string): Promise<string> {
    // A passkey added to an address nobody proved would let its maker in after the owner resets the password.
    await this.users.requireVerifiedEmail(user.id);
    const existing = await this.passkeys.find({ where: { userId: user.id }, select: { credentialId: true, transports: true } });
    // Said before the browser makes a passkey that could not be kept.
    if (existing.length >= MAX_PASSKEYS) throw tooMany();
    const challenge = await this.challenges.issue('registration', `session:${sessionId}`, user.id);
    const options = await generateRegistrationOptions({
      rpName: this.rp.rpName,
      rpID: this.rp.rpId,
      userName: user.username,
      userDisplayName: user.name,
      userID: userHandle(user.id),
      challenge: bytesOf(challenge),
      timeout: CEREMONY_TIMEOUT_MS,
      attestationType: 'none',
      excludeCredentials: existing.map((p) => ({ id: p.credentialId, transports: p.transports })),
      authenticatorSelection: { residentKey: 'required', userVerification: 'required' },
    });
    return JSON.stringify(options);
  }

  /**
   * Verifies the browser's answer to `registrationOptions` and keeps the passkey under `name` (or
   * "Passkey N"); the owner is told by e-mail, in the same transaction. When it is the account's first
   * second factor, the account also gets its ten recovery codes (as when the authenticator app is turned
   * on first): returned once, to be shown once.
   */
  async register(
    userId: string,
    sessionId: string,
    credentialJson: string,
    name: string,
  ): Promise<{ passkey: Passkey; recoveryCodes: string[] | null }> {
    const response = parseCredential(credentialJson) as unknown as RegistrationResponseJSON;
    const chosenName = name.trim() === '' ? null : validName(name);
    await this.users.requireVerifiedEmail(userId);
    const used = await this.challenges.use(challengeOf(response), 'registration', `session:${sessionId}`);
    if (!used || used.userId !== userId) throw challengeNotValid();
    let verified;
    try {
      verified = await verifyRegistrationResponse({
        response,
        expectedChallenge: used.challenge,
        expectedOrigin: this.rp.origin,
        expectedRPID: this.rp.rpId,
        requireUserVerification: true,
      });
    } catch (err) {
      throw notVerified(err);
    }
    if (!verified.verified) throw notVerified();
    const { credential, credentialDeviceType, credentialBackedUp } = verified.registrationInfo;
    return this.dataSource.transaction(async (tx) => {
      // Locks the user's row: two additions at once count each other against the limit.
      await tx.query('SELECT 1 FROM users WHERE id = $1 FOR UPDATE', [userId]);
      const count = await tx.count(PasskeyEntity, { where: { userId } });
      if (count >= MAX_PASSKEYS) throw tooMany();

      const first = !(await this.secondFactors.has(userId, tx));
      if (await tx.exists(PasskeyEntity, { where: { credentialId: credential.id } }))
        throw new PasskeyError('ALREADY_REGISTERED', 'This passkey is already registered.');
      const entity: PasskeyEntity = {
        id: randomUUID(),
        userId,
        credentialId: credential.id,
        publicKey: Buffer.from(credential.publicKey),
        signCount: String(credential.counter),
        transports: knownTransports(credential.transports ?? response.response.transports),
        deviceType: credentialDeviceType,
        backedUp: credentialBackedUp,
        name: chosenName ?? `Passkey ${count + 1}`,
        createdAt: this.clock.now(),
        lastUsedAt: null,
      };
      await tx.insert(PasskeyEntity, entity);
      await this.notices.notify(userId, { kind: 'second-factor-enabled', method: 'passkey', name: entity.name }, { tx });
      const recoveryCodes = first ? await this.recoveryCodes.replace(userId, tx) : null;
      return { passkey: toPasskey(entity), recoveryCodes };
    });
  }

  async rename(userId: string, id: string, name: string): Promise<Passkey> {
    const entity = await this.entity(userId, id);
    entity.name = validName(name);
    await this.passkeys.update({ id, userId }, { name: entity.name });
    return toPasskey(entity);
  }

  /**
   * Removes the passkey (it no longer signs in anywhere), and the recovery codes with the last second
   * factor; the owner is told by e-mail.
   */
  async remove(userId: string, id: string): Promise<Passkey> {
    return this.dataSource.transaction(async (tx) => {
      const entity = await tx.findOne(PasskeyEntity, { where: { id: uuidOrNone(id), userId } });
      if (!entity) throw notFound();
      await tx.delete(PasskeyEntity, { id, userId });
      // Recovery codes go with the last second factor, as when the authenticator app is turned off.
      if (!(await this.secondFactors.has(userId, tx))) await this.recoveryCodes.removeAll(userId, tx);
      await this.notices.notify(userId, { kind: 'second-factor-disabled', method: 'passkey', name: entity.name }, { tx });
      return toPasskey(entity);
    });
  }

  /**
   * Options for signing in with a passkey alone: no credentials listed (the browser offers the
   * passkeys it holds for this site, also in the login field's autofill). User verification is asked
   * for as "preferred" and required by `verifySignIn`: an authenticator that cannot verify its user
   * (and may answer without: a security key without a PIN) then still answers, and the page can say
   * what is missing, where "required" would make the browser fail with no reason given.
   */
  async signInOptions(): Promise<string> {
    const challenge = await this.challenges.issue('sign-in', 'anyone');
    return JSON.stringify(
      await generateAuthenticationOptions({
        rpID: this.rp.rpId,
        challenge: bytesOf(challenge),
        timeout: CEREMONY_TIMEOUT_MS,
        userVerification: 'preferred',
      }),
    );
  }

  /** Options for the second step of this user's sign-in (`boundTo` the pending sign-in), or null without passkeys. */
  async secondFactorOptions(userId: string, boundTo: string): Promise<string | null> {
    const passkeys = await this.passkeys.find({ where: { userId }, select: { credentialId: true, transports: true } });
    if (passkeys.length === 0) return null;
    const challenge = await this.challenges.issue('second-factor', boundTo, userId);
    const options = await generateAuthenticationOptions({
      rpID: this.rp.rpId,
      challenge: bytesOf(challenge),
      timeout: CEREMONY_TIMEOUT_MS,
      allowCredentials: passkeys.map((p) => ({ id: p.credentialId, transports: p.transports })),
      userVerification: 'preferred',
    });
    return JSON.stringify(options);
  }

  /** Signing in with a passkey alone: whose it is, once its answer is verified and its user verified. */
  verifySignIn(credentialJson: string): Promise<VerifiedPasskey> {
    return this.verifyAssertion(credentialJson, { purpose: 'sign-in', boundTo: 'anyone', userId: null, requireUserVerification: true });
  }

  /** A passkey as the second step of this user's sign-in (`boundTo` as in `secondFactorOptions`). */
  verifySecondFactor(userId: string, boundTo: string, credentialJson: string): Promise<VerifiedPasskey> {
    return this.verifyAssertion(credentialJson, { purpose: 'second-factor', boundTo, userId, requireUserVerification: false });
  }

  async purgeExpiredChallenges(): Promise<number> {
    return this.challenges.purgeExpired();
  }

  private async verifyAssertion(credentialJson: string, context: AssertionContext): Promise<VerifiedPasskey> {
    const response = parseCredential(credentialJson) as unknown as AuthenticationResponseJSON;
    const used = await this.challenges.use(challengeOf(response), context.purpose, context.boundTo);
    if (!used || used.userId !== context.userId) throw challengeNotValid();
    const entity = await this.passkeys.findOne({ where: { credentialId: String(response.id) }, relations: { user: true } });
    if (!entity || entity.user?.state !== 'active' || (context.userId !== null && entity.userId !== context.userId)) {
      throw new PasskeyError(
        'UNKNOWN_PASSKEY',
        'This passkey is not registered with Agora for your account. Use another one, or sign in with your password.',
      );
    }
    // A discoverable credential names its user: it must be the owner we know.
    const handle = response.response?.userHandle;
    if (handle && handle !== Buffer.from(userHandle(entity.userId)).toString('base64url')) throw notVerified();
    let verified;
    try {
      verified = await verifyAuthenticationResponse({
        response,
        expectedChallenge: used.challenge,
        expectedOrigin: this.rp.origin,
        expectedRPID: this.rp.rpId,
        credential: {
          id: entity.credentialId,
          publicKey: new Uint8Array(entity.publicKey),
          counter: Number(entity.signCount),
          transports: entity.transports,
        },
        // Checked below, after the signature, to say clearly what was missing.
        requireUserVerification: false,
      });
    } catch (err) {
      throw notVerified(err);
    }
    const info = verified.authenticationInfo;
    if (!verified.verified) throw notVerified();
    if (context.requireUserVerification && !info.userVerified) {
      throw new PasskeyError(
        'USER_NOT_VERIFIED',
        'Your passkey did not check that it is you (with a PIN, fingerprint or face). Signing in with a passkey alone needs that: turn on a PIN or screen lock for it, or sign in with your password.',
      );
    }
    const now = this.clock.now();
    await this.passkeys.update(
      { id: entity.id },
      { signCount: String(info.newCounter), backedUp: info.credentialBackedUp, lastUsedAt: now },
    );
    const passkey = toPasskey({ ...entity, lastUsedAt: now, backedUp: info.credentialBackedUp });
    return { userId: entity.userId, passkey, method: info.credentialDeviceType === 'singleDevice' ? 'hwk' : 'swk' };
  }

  private async entity(userId: string, id: string): Promise<PasskeyEntity> {
    const entity = await this.passkeys.findOne({ where: { id: uuidOrNone(id), userId } });
    if (!entity) throw notFound();
    return entity;
  }
}

/** A challenge's bytes: the options carry them base64url-encoded, which is the challenge again (a string would be encoded as text). */
function bytesOf(challenge: string): Uint8Array<ArrayBuffer> {
  return new Uint8Array(Buffer.from(challenge, 'base64url'));
}

/** Transports a browser reports (WebAuthn's AuthenticatorTransport): anything else it sent is not kept. */
const TRANSPORTS = new Set(['ble', 'cable', 'hybrid', 'internal', 'nfc', 'smart-card', 'usb']);

function knownTransports(reported: unknown): string[] {
  return Array.isArray(reported) ? [...new Set(reported.filter((t): t is string => typeof t === 'string' && TRANSPORTS.has(t)))] : [];
}

/** The user handle passkeys carry: the 16 bytes of the user's id (no name or address in it). */
function userHandle(userId: string): Uint8Array<ArrayBuffer> {
  return new Uint8Array(Buffer.from(userId.replace(/-/g, ''), 'hex'));
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** An id a uuid column can be compared with: anything else matches nothing (the nil uuid is never issued). */
function uuidOrNone(id: string): string {
  return UUID.test(id) ? id : '00000000-0000-0000-0000-000000000000';
}

/** `credential.toJSON()` as a form sent it: an object shaped like a public-key credential, or NOT_VERIFIED. */
function parseCredential(json: string): Record<string, unknown> & { id: string; response: Record<string, unknown> } {
  if (json.length === 0 || json.length > CREDENTIAL_MAX_CHARS) throw notVerified();
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch {
    throw notVerified();
  }
  const credential = value as { id?: unknown; rawId?: unknown; type?: unknown; response?: unknown };
  if (
    typeof value !== 'object' ||
    value === null ||
    typeof credential.id !== 'string' ||
    credential.rawId !== credential.id ||
    credential.type !== 'public-key' ||
    typeof credential.response !== 'object' ||
    credential.response === null ||
    typeof (credential.response as { clientDataJSON?: unknown }).clientDataJSON !== 'string'
  ) {
    throw notVerified();
  }
  return value as Record<string, unknown> & { id: string; response: Record<string, unknown> };
}

/** The challenge the response's client data names (signed over, then checked against ours). */
function challengeOf(response: { response: { clientDataJSON: string } }): string {
  try {
    const clientData = JSON.parse(Buffer.from(response.response.clientDataJSON, 'base64url').toString('utf8')) as { challenge?: unknown };
    return typeof clientData.challenge === 'string' ? clientData.challenge : '';
  } catch {
    return '';
  }
}

function validName(name: string): string {
  const trimmed = name.trim();
  const length = [...trimmed].length;
  if (length === 0) throw new PasskeyError('INVALID_NAME', 'Give the passkey a name.', 'name');
  if (length > PASSKEY_NAME_MAX) throw new PasskeyError('INVALID_NAME', `The name can be at most ${PASSKEY_NAME_MAX} characters.`, 'name');
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(trimmed)) throw new PasskeyError('INVALID_NAME', 'The name cannot contain control characters.', 'name');
  return trimmed;
}

function challengeNotValid(): PasskeyError {
  return new PasskeyError('CHALLENGE_NOT_VALID', 'This passkey request expired or was already used. Try again.');
}

function notVerified(cause?: unknown): PasskeyError {
  const error = new PasskeyError('NOT_VERIFIED', 'The passkey could not be verified. Try again, or use another one.');
  if (cause !== undefined) error.cause = cause;
  return error;
}

function tooMany(): PasskeyError {
  return new PasskeyError('TOO_MANY_PASSKEYS', `An account can have ${MAX_PASSKEYS} passkeys. Remove one you no longer use first.`);
}

function notFound(): PasskeyError {
  return new PasskeyError('PASSKEY_NOT_FOUND', 'No such passkey.');
}

function toPasskey(entity: PasskeyEntity): Passkey {
  return {
    id: entity.id,
    name: entity.name,
    deviceType: entity.deviceType,
    backedUp: entity.backedUp,
    createdAt: entity.createdAt,
    lastUsedAt: entity.lastUsedAt,
  };
}
