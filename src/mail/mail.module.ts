import { Module } from '@nestjs/common';
import { Mailer } from './mailer.js';

/** Outgoing e-mail: the `Mailer`. The messages themselves are `renderMail` (messages/), plain functions. */
@Module({
  providers: [Mailer],
  exports: [Mailer],
})
export class MailModule {}
