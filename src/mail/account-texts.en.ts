// Every word of the mails about an account (verification, change of address, password reset, a sign-up
// with a taken address), in English. Another language is another file of the same shape.

export const accountEn = {
  footer: 'You get this e-mail because of something done with your Agora account or this address. It is not a newsletter.',
  signature: 'If you did not ask for this, you can ignore this e-mail: nothing changes.',
  copyLink: 'If the button does not work, copy this address into your browser:',
  'verify-email': {
    subject: 'Verify your e-mail address for Agora',
    heading: 'Verify your e-mail address',
    intro: (username: string) => `Someone, hopefully you, created the Agora account @${username} with this address.`,
    body: 'Follow the link to confirm that this address is yours. Until you do, you can sign in and look around, but not create applications, personal access tokens or organizers.',
    valid: 'The link works for 24 hours, once.',
    action: 'Verify my address',
  },
  'change-email': {
    subject: 'Confirm your new e-mail address for Agora',
    heading: 'Confirm your new e-mail address',
    intro: (username: string) => `The Agora account @${username} asked to use this address from now on.`,
    body: 'Follow the link to confirm it. Until you do, Agora keeps writing to the old address.',
    valid: 'The link works for 24 hours, once.',
    action: 'Confirm my new address',
  },
  'reset-password': {
    subject: 'Reset your Agora password',
    heading: 'Reset your password',
    intro: (username: string) => `Someone, hopefully you, asked to reset the password of the Agora account @${username}.`,
    body: 'Follow the link to choose a new password. Every browser signed in to your account is then signed out.',
    valid: 'The link works for one hour, once.',
    action: 'Choose a new password',
  },
  'sign-up-attempt': {
    subject: 'Someone tried to create an Agora account with your address',
    heading: 'You already have an account',
    intro:
      'Someone, perhaps you, tried to create a new Agora account with this e-mail address. It already belongs to an account, so no new one was created.',
    body: (username: string) =>
      `Your account is @${username}. If it was you, sign in instead, or reset your password if you forgot it. If it was not you, nothing happened to your account.`,
    action: 'Sign in',
    reset: 'Reset your password',
  },
};

export type AccountMailTexts = typeof accountEn;
