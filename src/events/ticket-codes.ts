import { Inject, Injectable } from '@nestjs/common';
import jwt from 'jsonwebtoken';
import { APP_CONFIG } from '../config/config.module.js';
import type { AppConfig } from '../config/config.schema.js';
import { SigningKeysService } from '../oauth/keys/signing-keys.service.js';

/** The JWS `typ` of a ticket code (RFC 8725 §3.11): no id_token or other JWT of ours carries it. */
export const TICKET_CODE_TYPE = 'agora-ticket+jwt';
/** The `aud` of a ticket code: check-in, never a client id, so no relying party accepts one as an id_token. */
export const TICKET_CODE_AUDIENCE = 'agora-check-in';

/** The ticket a code stands for. */
export interface TicketHolder {
  attendeeId: string;
  registrationId: string;
  eventId: string;
  /** The registrant. Not written into the code: the attendee id binds it, and the code carries no more than it must. */
  userId?: string;
}

export type VerifiedTicket = Omit<TicketHolder, 'userId'>;

// A compact JWS of ours is about 700 characters; anything much longer is not one.
const MAX_CODE_LENGTH = 2048;
const COMPACT_JWS = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/**
 * Check-in codes: a compact JWS (RS256) under the OAuth server's signing keys, so a check-in app
 * verifies one offline with the published JWKS (docs/check-in.md). Claims: `iss`, `aud`, and the
 * attendee (`a`), registration (`r`) and event (`e`) ids. No `iat` and no `exp`: a code is the same
 * every time it is issued under one key (the QR code in a mail and in an app agree), and whether it
 * still admits anyone is the registration's state, which `checkInAttendee` reads; an expiry fixed at
 * issue would also outlive or cut short an event whose times change.
 */
@Injectable()
export class TicketCodes {
  constructor(
    private readonly keys: SigningKeysService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async issue(ticket: TicketHolder): Promise<string> {
    const { kid, privateKey } = await this.keys.activeKey();
    return jwt.sign({ a: ticket.attendeeId, r: ticket.registrationId, e: ticket.eventId }, privateKey, {
      algorithm: 'RS256',
      header: { alg: 'RS256', typ: TICKET_CODE_TYPE, kid },
      noTimestamp: true,
      issuer: this.config.baseUrl,
      audience: TICKET_CODE_AUDIENCE,
    });
  }

  /** The ticket of a code this server signed (any of its keys, retired ones included), or null. */
  async verify(code: string): Promise<VerifiedTicket | null> {
    if (code.length > MAX_CODE_LENGTH || !COMPACT_JWS.test(code)) return null;
    const header = jwsHeader(code);
    if (!header || header.alg !== 'RS256' || header.typ !== TICKET_CODE_TYPE || typeof header.kid !== 'string') return null;
    const key = await this.keys.verificationKey(header.kid);
    if (!key) return null;
    let claims: jwt.JwtPayload | string;
    try {
      claims = jwt.verify(code, key, { algorithms: ['RS256'], issuer: this.config.baseUrl, audience: TICKET_CODE_AUDIENCE });
    } catch {
      return null;
    }
    if (typeof claims === 'string') return null;
    const { a, r, e } = claims as Record<string, unknown>;
    if (![a, r, e].every((id) => typeof id === 'string' && UUID.test(id))) return null;
    return { attendeeId: a as string, registrationId: r as string, eventId: e as string };
  }
}

function jwsHeader(code: string): jwt.JwtHeader | null {
  try {
    return jwt.decode(code, { complete: true })?.header ?? null;
  } catch {
    return null;
  }
}
