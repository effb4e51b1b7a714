import { isScope, SCOPES } from '../../auth/scopes.js';
import type { SecurityNotice } from '../../security-notices/security-notices.js';
import type { RenderedMail } from '../outgoing-mail.js';
import { securityEn, type SecurityTexts } from '../security-texts.en.js';
import { en, type MailTexts } from '../texts.en.js';
import { renderHtml } from './html-layout.js';
import type { MailBody, MailDetail, MailLink } from './mail-body.js';
import type { Recipient } from './mail-message.js';
import { renderText } from './text-layout.js';

/** A security notice as a mail shows it: what happened, to whom, when, and where to act if it was not them. */
export interface SecurityMail {
  recipient: Recipient;
  username: string;
  notice: SecurityNotice;
  /** When it happened (a new browser's notice says so itself). */
  at: Date;
  /** Absolute addresses of the pages the mail points to (BASE_URL). */
  links: {
    /** The security page: password, second factor, passkeys, sessions. */
    security: string;
    /** "Forgot password?": a reset link by e-mail. */
    resetPassword: string;
    /** The account page, where personal access tokens are revoked. */
    tokens: string;
    /** The authorized applications, where their access is revoked. */
    applications: string;
  };
}

/** Fewer recovery codes than this left: the mail says to generate new ones (GitHub warns as they run out). */
const FEW_RECOVERY_CODES = 3;

/**
 * A security notice's mail: a text and an HTML part saying the same, no attachment, nothing remote. It is
 * essential mail (like a registration's), so it carries no List-Unsubscribe: nobody turns these off.
 */
export function renderSecurityMail(mail: SecurityMail, t: SecurityTexts = securityEn, layout: MailTexts = en): RenderedMail {
  const body = composeSecurityMail(mail, t, layout);
  return { subject: body.subject, text: renderText(body, layout), html: renderHtml(body, layout), attachments: [], headers: {} };
}

export function composeSecurityMail(mail: SecurityMail, t: SecurityTexts, layout: MailTexts): MailBody {
  const { notice, links } = mail;
  const what = describe(notice, t);
  const details: MailDetail[] = [
    { label: t.labels.account, value: `@${mail.username}` },
    { label: t.labels.when, value: t.when(notice.kind === 'new-browser' ? new Date(notice.at) : mail.at) },
    ...what.details,
  ];
  const review: MailLink = { label: t.actions.review, url: links.security };
  const reset: MailLink = { label: t.actions.resetPassword, url: links.resetPassword };
  const extra: MailLink[] =
    notice.kind === 'personal-token-created'
      ? [{ label: t.actions.tokens, url: links.tokens }]
      : notice.kind === 'application-authorized'
        ? [{ label: t.actions.applications, url: links.applications }]
        : [];
  return {
    subject: what.subject,
    preheader: what.intro,
    heading: what.heading,
    greeting: layout.greeting(mail.recipient.name),
    paragraphs: [what.intro, ...what.more],
    changes: [],
    details,
    notes: [t.ifYou, what.ifNot],
    tickets: [],
    action: review,
    links: [...extra, reset],
    footer: t.footer(mail.username),
  };
}

interface Described {
  subject: string;
  heading: string;
  intro: string;
  more: string[];
  details: MailDetail[];
  ifNot: string;
}

function describe(notice: SecurityNotice, t: SecurityTexts): Described {
  const plain = (words: { subject: () => string; heading: string; intro: string; ifNot: string }, details: MailDetail[] = []) => ({
    subject: words.subject(),
    heading: words.heading,
    intro: words.intro,
    more: [],
    details,
    ifNot: words.ifNot,
  });
  switch (notice.kind) {
    case 'new-browser': {
      const words = t.messages['new-browser'];
      return {
        subject: words.subject(notice.browser),
        heading: words.heading,
        intro: words.intro,
        more: [],
        details: [
          { label: t.labels.browser, value: notice.browser },
          { label: t.labels.ip, value: notice.ip },
        ],
        ifNot: words.ifNot,
      };
    }
    case 'password-changed':
    case 'password-reset':
    case 'recovery-codes-regenerated':
    case 'second-factor-reset':
      return plain(t.messages[notice.kind]);
    case 'email-changed': {
      const words = t.messages['email-changed'];
      return {
        subject: words.subject(),
        heading: words.heading,
        intro: words.intro(notice.newEmail),
        more: [],
        details: [{ label: t.labels.newEmail, value: notice.newEmail }],
        ifNot: words.ifNot,
      };
    }
    case 'second-factor-enabled':
    case 'second-factor-disabled': {
      const words = t.messages[notice.kind];
      return {
        subject: words.subject(notice.method),
        heading: words.heading(notice.method),
        intro: words.intro(notice.method, notice.name),
        more: [],
        details: notice.method === 'passkey' && notice.name ? [{ label: t.labels.passkey, value: notice.name }] : [],
        ifNot: words.ifNot,
      };
    }
    case 'recovery-code-used': {
      const words = t.messages['recovery-code-used'];
      return {
        subject: words.subject(),
        heading: words.heading,
        intro: words.intro,
        more: notice.remaining < FEW_RECOVERY_CODES ? [words.low] : [],
        details: [{ label: t.labels.codesLeft, value: String(notice.remaining) }],
        ifNot: words.ifNot,
      };
    }
    case 'personal-token-created': {
      const words = t.messages['personal-token-created'];
      return {
        subject: words.subject(notice.name),
        heading: words.heading,
        intro: words.intro,
        more: [],
        details: [
          { label: t.labels.token, value: notice.name },
          { label: t.labels.scopes, value: scopesLine(notice.scopes) },
        ],
        ifNot: words.ifNot,
      };
    }
    case 'service-account-created': {
      const words = t.messages['service-account-created'];
      return {
        subject: words.subject(notice.organizer),
        heading: words.heading,
        intro: words.intro(notice.organizer),
        more: [],
        details: [
          { label: t.labels.organizer, value: notice.organizer },
          { label: t.labels.serviceAccount, value: notice.name },
          { label: t.labels.scopes, value: scopesLine(notice.scopes) },
          { label: t.labels.by, value: `@${notice.by}` },
        ],
        ifNot: words.ifNot,
      };
    }
    case 'service-account-deleted': {
      const words = t.messages['service-account-deleted'];
      return {
        subject: words.subject(notice.organizer),
        heading: words.heading,
        intro: words.intro(notice.organizer),
        more: [],
        details: [
          { label: t.labels.organizer, value: notice.organizer },
          { label: t.labels.serviceAccount, value: notice.name },
          { label: t.labels.by, value: `@${notice.by}` },
        ],
        ifNot: words.ifNot,
      };
    }
    case 'application-authorized': {
      const words = t.messages['application-authorized'];
      return {
        subject: words.subject(notice.application),
        heading: words.heading,
        intro: words.intro(notice.application),
        more: [],
        details: [
          { label: t.labels.application, value: notice.application },
          { label: t.labels.scopes, value: scopesLine(notice.scopes) },
          ...(notice.resourceServers?.length ? [{ label: t.labels.resourceServers, value: notice.resourceServers.join('; ') }] : []),
        ],
        ifNot: words.ifNot,
      };
    }
  }
}

/** `api (Read and write all of your data through the API); openid (…)`: each scope with what it lets do. */
function scopesLine(scopes: string[]): string {
  return scopes.map((scope) => (isScope(scope) ? `${scope} (${SCOPES[scope]})` : scope)).join('; ');
}
