/** A link in a mail; shown as text when it is not http(s). */
export interface MailLink {
  label: string;
  url: string;
}

export interface MailDetail {
  label: string;
  value: string;
  /** Makes the value a link. */
  href?: string;
}

export interface MailChange {
  label: string;
  before: string;
  after: string;
}

export interface MailTicket {
  name: string;
  caption: string;
  alt: string;
  /** Content-ID of its QR image. */
  cid: string;
}

/** What one mail says, in order, before it becomes a text part and an HTML part of the same content. */
export interface MailBody {
  subject: string;
  /** The line mail apps show after the subject in the inbox. */
  preheader: string;
  heading: string;
  greeting: string;
  paragraphs: string[];
  changes: MailChange[];
  details: MailDetail[];
  /** Said after the details (the calendar file, what happens next). */
  notes: string[];
  tickets: MailTicket[];
  /** The mail's one button (the event's page), when there is one. */
  action?: MailLink;
  links: MailLink[];
  /** Why the person got this mail. */
  footer: string;
  unsubscribe?: MailLink;
}
