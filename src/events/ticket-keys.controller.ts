import { Controller, Get, Header } from '@nestjs/common';
import { IgnoresCredentials } from '../auth/public.decorator.js';
import { PublicJwk, SigningKeysService } from '../oauth/keys/signing-keys.service.js';

/**
 * How long a retired key stays in the ticket keys: longer than tickets are sold ahead of an event, so
 * a door app that fetches the keys on the day can verify every code mailed before a `keys:rotate`.
 */
export const TICKET_KEY_RETENTION_MS = 400 * 86_400_000;

/**
 * The keys that verify ticket codes offline (docs/check-in.md): a JWKS of the active signing key and the
 * keys retired in the last 400 days. Not the OpenID Connect JWKS, whose retired keys leave after the
 * tokens they signed expire (an hour), so that a key retired because it leaked stops vouching for
 * id_tokens soon.
 */
@Controller('check-in/keys')
@IgnoresCredentials()
export class TicketKeysController {
  constructor(private readonly keys: SigningKeysService) {}

  @Get()
  @Header('cache-control', 'public, max-age=300')
  @Header('access-control-allow-origin', '*')
  ticketKeys(): Promise<{ keys: PublicJwk[] }> {
    return this.keys.jwksRetainedFor(TICKET_KEY_RETENTION_MS);
  }
}
