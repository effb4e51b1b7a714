/** A page that needs a signed-in user was opened without one: the browser is sent to sign in. */
export class SignInRequired extends Error {
  constructor(
    /** Where to come back to afterwards (the page's own address, for a GET). */
    readonly returnTo: string | undefined,
  ) {
    super('Sign in to see this page');
    this.name = 'SignInRequired';
  }
}
