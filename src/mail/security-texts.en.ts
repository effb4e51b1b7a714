// Every word of the security notices (docs/account-security.md, "Security notices"), in English. Kept
// apart from the event mails' texts (texts.en.ts); the layout's own words (brand, language) come from there.

/** A second factor as the mails name it: the authenticator app, or one passkey by its name. */
const factor = (method: 'totp' | 'passkey', name?: string) =>
  method === 'totp' ? 'Two-factor authentication with an authenticator app' : `The passkey “${name ?? 'unnamed'}”`;

export const securityEn = {
  /** `Thursday, March 12, 2026 at 6:04 PM UTC`: read in UTC, the one zone every reader can convert from. */
  when: (at: Date) =>
    `${new Intl.DateTimeFormat('en', { timeZone: 'UTC', dateStyle: 'full', timeStyle: 'short' }).format(at)} UTC (${at.toISOString().slice(0, 19)}Z)`,
  labels: {
    account: 'Account',
    when: 'When',
    browser: 'Browser',
    ip: 'IP address',
    newEmail: 'New address',
    method: 'Method',
    passkey: 'Passkey',
    codesLeft: 'Recovery codes left',
    token: 'Token',
    application: 'Application',
    scopes: 'Access',
    resourceServers: 'Also for',
    organizer: 'Organizer',
    serviceAccount: 'Service account',
    by: 'By',
  },
  actions: {
    review: 'Review your account’s security',
    resetPassword: 'Reset your password',
    tokens: 'Your personal access tokens',
    applications: 'Your authorized applications',
  },
  footer: (username: string) =>
    `You get this e-mail because it is about the security of your Agora account @${username}. Security notices are always sent, whatever your e-mail settings.`,
  /** Said in every notice: nothing to do when it was you. */
  ifYou: 'If this was you, there is nothing to do.',
  messages: {
    'new-browser': {
      subject: (browser: string) => `New sign-in to your Agora account from ${browser}`,
      heading: 'A new sign-in to your account',
      intro: 'Someone signed in to your account from a browser it was not used in before.',
      ifNot:
        'If this was not you, someone knows your password: change it now on the security page (or reset it by e-mail), where you can also sign out every session you do not recognize, and turn on two-factor authentication.',
    },
    'password-changed': {
      subject: () => 'Your Agora password was changed',
      heading: 'Your password was changed',
      intro:
        'The password of your account was changed (on the security page, or by an operator). Every other session of your account was signed out.',
      ifNot: 'If this was not you, reset your password by e-mail right away, then review your account’s security.',
    },
    'password-reset': {
      subject: () => 'Your Agora password was reset',
      heading: 'Your password was reset',
      intro:
        'The password of your account was reset with the link sent to this address. Every other session of your account was signed out.',
      ifNot:
        'If this was not you, someone can read your e-mail: secure your mailbox first, then reset your password again and review your account’s security.',
    },
    'email-changed': {
      subject: () => 'The e-mail address of your Agora account was changed',
      heading: 'Your e-mail address was changed',
      intro: (newEmail: string) =>
        `The e-mail address of your account was changed from this address to ${newEmail}. Mail about your account goes to the new address from now on; this is the last one sent here.`,
      ifNot:
        'If this was not you, someone else may have your password: sign in, change your password and put your address back on the security page. If you can no longer sign in, contact the people who run this Agora service.',
    },
    'second-factor-enabled': {
      subject: (method: 'totp' | 'passkey') =>
        method === 'totp' ? 'Two-factor authentication is on for your Agora account' : 'A passkey was added to your Agora account',
      heading: (method: 'totp' | 'passkey') => (method === 'totp' ? 'Two-factor authentication is on' : 'A passkey was added'),
      intro: (method: 'totp' | 'passkey', name?: string) =>
        method === 'totp'
          ? `${factor(method)} was turned on: signing in now takes a code from the app after the password.`
          : `${factor(method, name)} was added to your account: it can now sign you in.`,
      ifNot:
        'If this was not you, someone is signed in to your account: change your password, sign out the sessions you do not recognize and remove what was added, on the security page.',
    },
    'second-factor-disabled': {
      subject: (method: 'totp' | 'passkey') =>
        method === 'totp' ? 'Two-factor authentication is off for your Agora account' : 'A passkey was removed from your Agora account',
      heading: (method: 'totp' | 'passkey') => (method === 'totp' ? 'Two-factor authentication is off' : 'A passkey was removed'),
      intro: (method: 'totp' | 'passkey', name?: string) =>
        method === 'totp'
          ? `${factor(method)} was turned off: the app’s codes and your recovery codes no longer work.`
          : `${factor(method, name)} was removed from your account: it can no longer sign you in.`,
      ifNot:
        'If this was not you, someone is signed in to your account: change your password, sign out the sessions you do not recognize and set up your second factor again, on the security page.',
    },
    'recovery-code-used': {
      subject: () => 'A recovery code was used to sign in to your Agora account',
      heading: 'A recovery code was used',
      intro: 'One of your recovery codes was used in place of your authenticator app to sign in. It cannot be used again.',
      low: 'Few codes are left: generate new ones on the security page (the old ones then stop working).',
      ifNot:
        'If this was not you, someone has your password and one of your recovery codes: change your password, generate new recovery codes and sign out the sessions you do not recognize, on the security page.',
    },
    'recovery-codes-regenerated': {
      subject: () => 'New recovery codes for your Agora account',
      heading: 'New recovery codes',
      intro: 'New recovery codes were generated for your account. The previous ones no longer work.',
      ifNot:
        'If this was not you, someone is signed in to your account: change your password and sign out the sessions you do not recognize, on the security page.',
    },
    'second-factor-reset': {
      subject: () => 'Your Agora two-factor authentication was reset',
      heading: 'Your second factor was reset',
      intro:
        'An administrator of this Agora service removed your second factor (authenticator app, recovery codes and passkeys), as people do when someone has lost their phone. Your password alone signs you in now.',
      ifNot:
        'If you did not ask for this, contact the people who run this Agora service. Either way, set up two-factor authentication again on the security page.',
    },
    'personal-token-created': {
      subject: (name: string) => `A personal access token was created for your Agora account: ${name}`,
      heading: 'A personal access token was created',
      intro: 'A personal access token was created for your account. Whoever holds it can use the API as you, with the access listed.',
      ifNot:
        'If this was not you, revoke the token now on your account page, then change your password and sign out the sessions you do not recognize, on the security page.',
    },
    'service-account-created': {
      subject: (organizer: string) => `A service account was created for ${organizer} on Agora`,
      heading: 'A service account was created',
      intro: (organizer: string) =>
        `A service account was created for ${organizer}. Whoever holds its secret can act for the organizer through the API (its events, registrations and check-ins), with the access listed.`,
      ifNot:
        'If you did not expect this, delete the service account on the service accounts page and ask the organizer’s owners who made it.',
    },
    'service-account-deleted': {
      subject: (organizer: string) => `A service account of ${organizer} was deleted on Agora`,
      heading: 'A service account was deleted',
      intro: (organizer: string) => `A service account of ${organizer} was deleted: its secret and every token it held stopped working.`,
      ifNot: 'If you did not expect this, ask the organizer’s owners: a program that used it can no longer reach the API.',
    },
    'application-authorized': {
      subject: (application: string) => `${application} was authorized to use your Agora account`,
      heading: 'An application was authorized',
      intro: (application: string) => `${application} was given access to your account, as listed.`,
      ifNot:
        'If this was not you, revoke the application’s access now under your authorized applications, then change your password and sign out the sessions you do not recognize, on the security page.',
    },
  },
};

export type SecurityTexts = typeof securityEn;
