/**
 * The longest place kept, normalised (percent-encoded) as the Location header carries it: room for an
 * authorization request with a long `state` and `nonce`, which a sign-in or a second step returns to.
 * The database keeps no longer one (`pending_sign_ins.return_to`).
 */
export const RETURN_TO_MAX_LENGTH = 8192;

/**
 * A place on this site to send the user after signing in, or "/" for anything else. The decision is
 * made on the normalised value, the one the Location header will carry: `/..//evil.example`,
 * `/%2e%2e//evil.example` or `/a/..//x` normalise to a network-path reference (`//evil.example`) that
 * browsers would follow off-site, so they are refused like `//evil.example` itself.
 */
export function safeReturnTo(value: unknown, baseUrl: string): string {
  if (
    typeof value !== 'string' ||
    !value.startsWith('/') ||
    value.length > RETURN_TO_MAX_LENGTH ||
    hasControlCharacter(value) ||
    value.includes('\\')
  )
    return '/';
  try {
    const base = new URL(baseUrl);
    const target = new URL(value, base);
    const normalised = `${target.pathname}${target.search}`;
    if (target.origin !== base.origin || !isLocalPath(normalised) || normalised.length > RETURN_TO_MAX_LENGTH) return '/';
    // What the browser will make of the normalised value must be the very same place.
    const again = new URL(normalised, base);
    return again.origin === base.origin && `${again.pathname}${again.search}` === normalised ? normalised : '/';
  } catch {
    return '/';
  }
}

/** A path that starts with exactly one slash (not `//` or `/\`, which leave the site). */
function isLocalPath(path: string): boolean {
  return path.startsWith('/') && path[1] !== '/' && path[1] !== '\\';
}

function hasControlCharacter(value: string): boolean {
  return [...value].some((c) => c.charCodeAt(0) < 0x20 || c.charCodeAt(0) === 0x7f);
}
