import { SAMPLE_SECURITY_MAILS } from '../../../test/support/security-mail-samples.js';
import type { SecurityNotice, SecurityNoticeKind } from '../../security-notices/security-notices.js';
import { renderSecurityMail, type SecurityMail } from './security-mail.js';

const base: SecurityMail = SAMPLE_SECURITY_MAILS[1]!.mail;

/** One notice of every kind: a kind added to SecurityNotice does not compile until it is added here. */
const EVERY_KIND: { [K in SecurityNoticeKind]: Extract<SecurityNotice, { kind: K }> } = {
  'new-browser': { kind: 'new-browser', browser: 'Firefox on Linux', ip: '203.0.113.7', at: '2026-03-14T18:04:00.000Z' },
  'password-changed': { kind: 'password-changed' },
  'password-reset': { kind: 'password-reset' },
  'email-changed': { kind: 'email-changed', newEmail: 'new@example.com' },
  'second-factor-enabled': { kind: 'second-factor-enabled', method: 'totp' },
  'second-factor-disabled': { kind: 'second-factor-disabled', method: 'passkey', name: 'Phone' },
  'recovery-code-used': { kind: 'recovery-code-used', remaining: 7 },
  'recovery-codes-regenerated': { kind: 'recovery-codes-regenerated' },
  'second-factor-reset': { kind: 'second-factor-reset' },
  'personal-token-created': { kind: 'personal-token-created', name: 'ci', scopes: ['api'] },
  'application-authorized': { kind: 'application-authorized', application: 'Scheduler', scopes: ['openid', 'unknown-scope'] },
  'service-account-created': { kind: 'service-account-created', organizer: 'Rust Belt', name: 'Nightly sync', scopes: ['api'], by: 'ada' },
  'service-account-deleted': { kind: 'service-account-deleted', organizer: 'Rust Belt', name: 'Nightly sync', by: 'ada' },
};

describe('renderSecurityMail', () => {
  it.each(Object.values(EVERY_KIND).map((notice: SecurityNotice) => [notice.kind, notice] as const))(
    'writes %s as a text and an HTML part saying the same: what, when, whose account, and what to do if it was not you',
    (_kind, notice) => {
      const mail = renderSecurityMail({ ...base, notice });
      expect(mail.subject).toMatch(/\S/);
      for (const part of [mail.text, mail.html]) {
        expect(part).toContain('Hello Katherine Coleman Goble Johnson,');
        expect(part).toContain('@katherine-coleman-goble-johnson');
        expect(part).toContain('2026-03-14T18:04:00Z');
        expect(part).toContain('https://agora.example.com/account/security');
        expect(part).toContain('https://agora.example.com/forgot-password');
        expect(part).toMatch(/If this was not you|If you did not/);
      }
      expect(mail.headers).toEqual({});
      expect(mail.attachments).toEqual([]);
      expect(mail.html).not.toMatch(/<img|<link|<script|url\(/i);
    },
  );

  it('escapes what users named in the HTML part and keeps it as typed in the text part', () => {
    const mail = renderSecurityMail({
      ...base,
      notice: { kind: 'personal-token-created', name: '<script>x</script>', scopes: ['read_api'] },
    });
    expect(mail.html).toContain('&lt;script&gt;x&lt;/script&gt;');
    expect(mail.html).not.toContain('<script>');
    expect(mail.text).toContain('Token: <script>x</script>');
  });

  it('says to make new recovery codes when few are left', () => {
    const few = renderSecurityMail({ ...base, notice: { kind: 'recovery-code-used', remaining: 1 } });
    const many = renderSecurityMail({ ...base, notice: { kind: 'recovery-code-used', remaining: 8 } });
    expect(few.text).toContain('Few codes are left');
    expect(many.text).not.toContain('Few codes are left');
  });

  it('names the resource servers an application was authorized for, when the approval added any', () => {
    const notice = { kind: 'application-authorized' as const, application: 'Scheduler', scopes: ['api'] };
    const plain = renderSecurityMail({ ...base, notice });
    const servers = renderSecurityMail({ ...base, notice: { ...notice, resourceServers: ['Billing API (https://billing.example.com)'] } });
    expect(plain.text).not.toContain('Also for');
    expect(servers.text).toContain('Also for: Billing API (https://billing.example.com)');
    expect(servers.html).toContain('Billing API (https://billing.example.com)');
  });
});
