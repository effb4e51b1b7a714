import { renderWebhookDisabledMail } from './webhook-mail.js';

describe('renderWebhookDisabledMail', () => {
  const mail = renderWebhookDisabledMail({
    recipient: { name: 'Ada <Lovelace>', email: 'ada@example.com' },
    owner: 'Rust Paris',
    url: 'https://hooks.example.com/agora?x=<1>',
    description: 'CRM sync',
    reason: 'Every delivery failed for more than 72 hours; the last answered HTTP 503.',
    disabledAt: new Date('2026-03-04T10:15:00Z'),
    endpointPage: 'https://agora.example.com/webhooks/abc',
  });

  it('says which endpoint, why and when, and links to its page, in text and HTML', () => {
    expect(mail.subject).toBe('Webhook endpoint disabled: https://hooks.example.com/agora?x=<1>');
    expect(mail.text).toContain('Endpoint: https://hooks.example.com/agora?x=<1>');
    expect(mail.text).toContain('Why: Every delivery failed for more than 72 hours; the last answered HTTP 503.');
    expect(mail.text).toContain('Disabled: 2026-03-04 10:15 UTC');
    expect(mail.text).toContain('Review the endpoint: https://agora.example.com/webhooks/abc');
    expect(mail.html).toContain('href="https://agora.example.com/webhooks/abc"');
    expect(mail.html).toContain('x=&lt;1&gt;');
    expect(mail.html).toContain('Hello Ada &lt;Lovelace&gt;,');
  });
});
