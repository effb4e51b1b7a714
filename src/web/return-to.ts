/**
 * A place on this site to send the user after signing in, or "/" for anything else: only a path that
 * resolves to the service's own origin, so a crafted link cannot bounce the user to another site.
 */
export function safeReturnTo(value: unknown, baseUrl: string): string {
  if (typeof value !== 'string' || !value.startsWith('/') || value.startsWith('//') || value.includes('\\') || hasControlCharacter(value))
    return '/';
  try {
    const base = new URL(baseUrl);
    const target = new URL(value, base);
    return target.origin === base.origin ? `${target.pathname}${target.search}` : '/';
  } catch {
    return '/';
  }
}

function hasControlCharacter(value: string): boolean {
  return [...value].some((c) => c.charCodeAt(0) < 0x20 || c.charCodeAt(0) === 0x7f);
}
