import { z } from 'zod';
import { decryptWithSecret, encryptWithSecret } from '../config/key-encryption.js';

/**
 * A one-time message for the page a form redirects to: a notice ("Token revoked"), or a secret shown
 * exactly once (a new token or client secret). It travels in an encrypted, HttpOnly cookie that the
 * page it is meant for reads and clears, so a reload or the back button never shows it again.
 */
export interface Flash {
  /** The path of the page it is for: any other page leaves it alone. */
  path: string;
  notice?: string;
  /** A secret to show once, with what it is. */
  secret?: { label: string; value: string };
}

const SEALED = z.object({
  path: z.string(),
  notice: z.string().optional(),
  secret: z.object({ label: z.string(), value: z.string() }).optional(),
  sessionId: z.string().nullable(),
  expiresAt: z.number(),
});

/** Seconds a flash waits for its page. */
export const FLASH_TTL_SECONDS = 120;

/** Seals flashes under a key of their own derived from SECRET_KEY, bound to the browser's session. */
export class FlashSealer {
  constructor(private readonly secretKey: string) {}

  seal(flash: Flash, sessionId: string | null, now: number): string {
    const payload = JSON.stringify({ ...flash, sessionId, expiresAt: now + FLASH_TTL_SECONDS * 1000 });
    return encryptWithSecret(this.secretKey, payload, 'page-flash');
  }

  /** The flash, or null when it is unreadable, expired, or another session's. */
  open(value: string | undefined, sessionId: string | null, now: number): Flash | null {
    if (!value) return null;
    try {
      const sealed = SEALED.parse(JSON.parse(decryptWithSecret(this.secretKey, value, 'page-flash')));
      if (sealed.sessionId !== sessionId || sealed.expiresAt < now) return null;
      return { path: sealed.path, notice: sealed.notice, secret: sealed.secret };
    } catch {
      return null;
    }
  }
}
