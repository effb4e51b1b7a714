import { Module } from '@nestjs/common';
import { EventsModule } from '../events/events.module.js';
import { MailModule } from '../mail/mail.module.js';
import { UsersModule } from '../users/users.module.js';
import { NoticeSender } from './notice-sender.js';
import { OneClickUnsubscribeController, UnsubscribePageController } from './unsubscribe.controller.js';
import { UnsubscribeLinks } from './unsubscribe-links.js';
import { JobsModule } from '../jobs/jobs.module.js';

/**
 * What Agora tells people by e-mail: the events domain's notices (its outbox, EventNotices) become
 * mails in jobs; reminders can be turned off (the account page, one-click unsubscribe). docs/mail.md.
 */
@Module({
  imports: [JobsModule, EventsModule, MailModule, UsersModule],
  controllers: [UnsubscribePageController, OneClickUnsubscribeController],
  providers: [NoticeSender, UnsubscribeLinks],
})
export class NotificationsModule {}
