import { randomUUID } from 'node:crypto';

/** The event a logout token carries (OpenID Connect Back-Channel Logout 1.0 §2.4). */
export const BACKCHANNEL_LOGOUT_EVENT = 'http://schemas.openid.net/event/backchannel-logout';

/** The `typ` header of a logout token (§2.4: explicit typing, RFC 8725 §3.11). */
export const LOGOUT_TOKEN_TYPE = 'logout+jwt';

/** How long a logout token is good for: its receiver should accept it only while fresh. */
export const LOGOUT_TOKEN_TTL_SECONDS = 120;

/**
 * The claims of a logout token (§2.4): iss, aud, iat, exp, jti, the user (`sub`) and the session
 * (`sid`), the back-channel logout event, and never a `nonce` (which would let it pass for an id_token).
 */
export function logoutTokenClaims(options: {
  issuer: string;
  clientId: string;
  sub: string;
  sid: string;
  now: Date;
}): Record<string, unknown> {
  const iat = Math.floor(options.now.getTime() / 1000);
  return {
    iss: options.issuer,
    aud: options.clientId,
    iat,
    exp: iat + LOGOUT_TOKEN_TTL_SECONDS,
    jti: randomUUID(),
    sub: options.sub,
    sid: options.sid,
    events: { [BACKCHANNEL_LOGOUT_EVENT]: {} },
  };
}
