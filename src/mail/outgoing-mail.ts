/** A file carried by a mail: an .ics invitation, or an image the HTML shows inline by its `cid`. */
export interface MailAttachment {
  filename: string;
  content: Buffer | string;
  /** Full MIME type, parameters included (`text/calendar; charset=utf-8; method=PUBLISH`). */
  contentType: string;
  /** Content-ID of an inline image, referenced from the HTML as `cid:<cid>`. */
  cid?: string;
}

/** One e-mail to one person, as `Mailer.send` takes it. */
export interface OutgoingMail {
  to: string;
  subject: string;
  text: string;
  html: string;
  attachments?: MailAttachment[];
  /** Extra headers, such as List-Unsubscribe. */
  headers?: Record<string, string>;
  /**
   * The Message-ID: the same for every try of one mail, so a retried job cannot make two different
   * mails. `<id@host>`, or a bare token (a job id) which gets `@` the sender's domain; generated when unset.
   */
  messageId?: string;
}

/** What `renderMail` makes: everything but the recipient and the Message-ID. */
export type RenderedMail = Omit<OutgoingMail, 'to' | 'messageId'>;
