import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Who ended a registration, so that what tells the registrant (a mail, the API) can say why: its
 * registrant (`attendee`), the organizer's owner or admin (`organizer`), or the event's cancellation
 * (`event_cancelled`). Null while the registration is active, and for registrations cancelled before
 * this was recorded (nothing tells who cancelled those).
 */
export class RegistrationCancelledBy1796200000001 implements MigrationInterface {
  name = 'RegistrationCancelledBy1796200000001';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `ALTER TABLE registrations ADD COLUMN cancelled_by text
         CONSTRAINT registrations_cancelled_by_check CHECK (cancelled_by IN ('attendee', 'organizer', 'event_cancelled'))`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE registrations DROP COLUMN cancelled_by`);
  }
}
