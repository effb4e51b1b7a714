// Every word a mail says, in English. Another language is another file of the same shape
// (`export const de: MailTexts = {…}`), chosen by renderMail.

export const en = {
  /** For Intl.DateTimeFormat: how dates and times are written. */
  locale: 'en',
  /** The `lang` of the HTML part. */
  language: 'en',
  brand: 'Agora',
  greeting: (name: string) => `Hello ${name},`,
  labels: {
    when: 'When',
    timeZone: 'Time zone',
    where: 'Where',
    online: 'Online',
    tickets: 'Tickets',
    reference: 'Registration',
    organizer: 'Organizer',
    before: 'Before',
    now: 'Now',
  },
  quantity: (quantity: number, ticketTypeName: string) => `${quantity} × ${ticketTypeName}`,
  noVenue: 'No venue',
  noOnlineUrl: 'No online link',
  changeLabels: { time: 'Time', venue: 'Venue', online_url: 'Online link' },
  actions: {
    viewEvent: 'View the event',
    manage: 'Manage your registration',
    joinOnline: 'Join online',
  },
  calendar: {
    added: 'The attached calendar file (event.ics) adds the event to your calendar.',
    updated: 'The attached calendar file (event.ics) updates the event in your calendar.',
    removed: 'The attached calendar file (event.ics) removes the event from your calendar.',
  },
  tickets: {
    heading: 'Check-in codes',
    intro: 'Show the code at the entrance: the organizer scans it to check you in. Each code is for one attendee.',
    introText:
      'Each attendee has a check-in code, shown as an image in this mail (open it in a mail app that shows images) and in your registration.',
    alt: (name: string, reference: string) => `Check-in code for ${name}, registration ${reference}`,
    caption: (reference: string) => `Registration ${reference}`,
  },
  footer: {
    registered: (title: string) => `You get this e-mail because you registered for ${title} on Agora.`,
    reminders: (title: string) => `You get this reminder because you registered for ${title} on Agora and reminders are on for you.`,
    unsubscribe: 'Stop these reminders',
  },
  messages: {
    'registration.confirmed': {
      subject: (title: string) => `You're registered: ${title}`,
      heading: "You're registered",
      intro: (title: string) => `Your registration for ${title} is confirmed. See you there!`,
    },
    'registration.promoted': {
      subject: (title: string) => `A place opened up: you're registered for ${title}`,
      heading: "You're off the waitlist",
      intro: (title: string) =>
        `A place opened up for ${title} and it is yours: your registration moved from the waitlist and is confirmed.`,
    },
    'registration.waitlisted': {
      subject: (title: string) => `You're on the waitlist: ${title}`,
      heading: "You're on the waitlist",
      intro: (title: string) => `${title} is full right now, so you are on its waitlist.`,
      next: 'If a place opens up, it is yours and you get another e-mail with your confirmation. Nothing to do until then.',
    },
    'registration.cancelled': {
      subject: (title: string) => `Registration cancelled: ${title}`,
      heading: 'Your registration is cancelled',
      intro: {
        attendee: (title: string) => `Your registration for ${title} is cancelled, as you asked.`,
        organizer: (title: string, organizer: string) => `${organizer}, the organizer, cancelled your registration for ${title}.`,
        event_cancelled: (title: string) => `${title} is cancelled, so your registration has ended.`,
      },
    },
    'event.changed': {
      subject: (title: string) => `Changed: ${title}`,
      heading: 'The event has changed',
      intro: (title: string, organizer: string) => `${organizer} changed ${title}. Here is what is different:`,
      rest: 'Your registration stays as it is. If the new plan does not suit you, you can cancel it.',
    },
    'event.cancelled': {
      subject: (title: string) => `Cancelled: ${title}`,
      heading: 'The event is cancelled',
      intro: (title: string, organizer: string) => `${organizer} cancelled ${title}. It will not take place.`,
      registrationEnded: (reference: string) => `Your registration ${reference} has ended.`,
    },
    'event.reminder': {
      subject: (title: string, when: string) => `Reminder: ${title}, ${when}`,
      heading: 'Coming up soon',
      intro: (title: string) => `This is a reminder that ${title} is coming up.`,
    },
  },
};

export type MailTexts = typeof en;
