import { renderAccountMail } from './account-mail.js';

const recipient = { name: 'Ada <Lovelace>', email: 'ada@example.com' };
const url = `https://agora.example.com/reset-password?token=${'a'.repeat(65)}`;

describe('renderAccountMail', () => {
  it('says the same in text and HTML: the link written out in the text, a button and the address in the HTML', () => {
    const mail = renderAccountMail({ kind: 'reset-password', recipient, username: 'ada', url });
    expect(mail.subject).toBe('Reset your Agora password');
    expect(mail.text).toContain(`Choose a new password: ${url}`);
    expect(mail.text).toContain('The link works for one hour, once.');
    expect(mail.html).toContain(`href="${url}"`);
    expect(mail.html).toContain('The link works for one hour, once.');
    expect(mail.attachments).toEqual([]);
  });

  it('escapes names in the HTML', () => {
    const mail = renderAccountMail({ kind: 'verify-email', recipient, username: 'ada', url });
    expect(mail.html).toContain('Hello Ada &lt;Lovelace&gt;,');
    expect(mail.html).not.toContain('<Lovelace>');
  });

  it('tells the owner of a taken address how to sign in or reset, with no token in it', () => {
    const mail = renderAccountMail({
      kind: 'sign-up-attempt',
      recipient,
      username: 'ada',
      signInUrl: 'https://agora.example.com/sign-in',
      resetUrl: 'https://agora.example.com/forgot-password',
    });
    expect(mail.text).toContain('Your account is @ada.');
    expect(mail.text).toContain('Reset your password: https://agora.example.com/forgot-password');
    expect(mail.text).not.toContain('token=');
  });
});
