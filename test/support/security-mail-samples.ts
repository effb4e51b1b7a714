import type { SecurityMail } from '../../src/mail/messages/security-mail.js';

// Sample security notices for the browser tier's screenshots: a long name, a long address and a long
// application name, on purpose.

const base = {
  recipient: { name: 'Katherine Coleman Goble Johnson', email: 'katherine.johnson@flight-research.example.com' },
  username: 'katherine-coleman-goble-johnson',
  at: new Date('2026-03-14T18:04:00Z'),
  links: {
    security: 'https://agora.example.com/account/security',
    resetPassword: 'https://agora.example.com/forgot-password',
    tokens: 'https://agora.example.com/account#tokens',
    applications: 'https://agora.example.com/account/authorized',
  },
};

/** A few notices, named for the screenshots (docs/screenshots/mail-security.<name>-<width>.png). */
export const SAMPLE_SECURITY_MAILS: { name: string; mail: SecurityMail }[] = [
  {
    name: 'new-browser',
    mail: {
      ...base,
      notice: { kind: 'new-browser', browser: 'Safari on iOS', ip: '2001:db8:85a3:8d3:1319:8a2e:370:7348', at: '2026-03-14T18:04:00.000Z' },
    },
  },
  { name: 'password-changed', mail: { ...base, notice: { kind: 'password-changed' } } },
  {
    name: 'application-authorized',
    mail: {
      ...base,
      notice: {
        kind: 'application-authorized',
        application: 'Open Transit Berlin Volunteer Scheduler',
        scopes: ['openid', 'profile', 'api'],
      },
    },
  },
];
