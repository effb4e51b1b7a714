/**
 * How a user signed in: the `amr` values of OpenID Connect (RFC 8176) that Agora records on a session, and
 * the `acr` (authentication context class) they add up to. docs/account-security.md lists both for client
 * developers.
 */

/** RFC 8176 method references Agora uses. */
export type AuthMethod = 'pwd' | 'otp' | 'hwk' | 'swk' | 'mfa';

export const AUTH_METHODS: readonly AuthMethod[] = ['pwd', 'otp', 'hwk', 'swk', 'mfa'];

/**
 * The authentication context classes Agora supports, weakest first:
 * - `aal1`: one factor (a password);
 * - `aal2`: two factors (a password and a code or a passkey, or a passkey that verified the user);
 * - `phr`: phishing-resistant (OpenID EAP ACR values): a passkey took part.
 * `phr` satisfies a request for `aal2` as well.
 */
export type Acr = 'aal1' | 'aal2' | 'phr';

export const ACR_VALUES: readonly Acr[] = ['aal1', 'aal2', 'phr'];

/**
 * The methods of a sign-in made of several steps, in a stable order, with `mfa` when two or more factors
 * took part. A passkey that verified its user (a PIN or a biometric: WebAuthn user verification) is two
 * factors on its own, so `mfa` comes with it whether or not a password was typed.
 */
export function combineAmr(...steps: readonly (readonly AuthMethod[])[]): AuthMethod[] {
  const methods = new Set<AuthMethod>(steps.flat().filter((m) => m !== 'mfa'));
  const factors = [...methods].length;
  const passkey = methods.has('hwk') || methods.has('swk');
  if (factors >= 2 || passkey) methods.add('mfa');
  return AUTH_METHODS.filter((m) => methods.has(m));
}

/** The strongest class a sign-in with these methods reaches. */
export function acrOf(amr: readonly AuthMethod[]): Acr {
  if (amr.includes('hwk') || amr.includes('swk')) return 'phr';
  if (amr.includes('mfa')) return 'aal2';
  return 'aal1';
}

/** Whether a sign-in of class `have` meets a request for class `want`. */
export function acrSatisfies(have: Acr, want: Acr): boolean {
  return ACR_VALUES.indexOf(have) >= ACR_VALUES.indexOf(want);
}

/** Values read back from the database (a text[] column), keeping only known methods. */
export function toAmr(values: readonly string[] | null | undefined): AuthMethod[] {
  return (values ?? []).filter((v): v is AuthMethod => (AUTH_METHODS as readonly string[]).includes(v));
}
