// Every word of the mails about webhooks, in English. Another language is another file of the same shape.

export const webhookEn = {
  footer: 'You get this e-mail because you manage this webhook endpoint on Agora. It is not a newsletter.',
  disabled: {
    subject: (url: string) => `Webhook endpoint disabled: ${url}`,
    heading: 'A webhook endpoint was disabled',
    intro: (owner: string) =>
      `Agora stopped sending webhooks to an endpoint of ${owner}: every delivery to it failed for more than 72 hours.`,
    body: 'Deliveries still waiting for a retry were marked as failed, and new events are not sent to it. Once the receiver works again, set the endpoint to active: new events are delivered from then on, and you can redeliver the failed ones from the delivery log.',
    action: 'Review the endpoint',
  },
  labels: {
    url: 'Endpoint',
    description: 'Description',
    reason: 'Why',
    when: 'Disabled',
  },
  when: (at: Date) => `${at.toISOString().replace('T', ' ').slice(0, 16)} UTC`,
};

export type WebhookMailTexts = typeof webhookEn;
