import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityTarget } from 'typeorm';
import { EntityTable, Nested } from '../database/entity-table.js';
import { AttendeeEntity } from './attendee.entity.js';
import { EventEntity } from './event.entity.js';
import type { Attendee, Event, Organizer, OrganizerMember, Registration, TicketType, Venue } from './events.model.js';
import { OrganizerMemberEntity } from './organizer-member.entity.js';
import { OrganizerEntity } from './organizer.entity.js';
import { RegistrationEntity } from './registration.entity.js';
import { TicketTypeEntity } from './ticket-type.entity.js';

/** The venue of an event: the venue_* columns, read as one object. */
const VENUE: Nested & { fields: Record<keyof Venue, string> } = {
  property: 'venue',
  fields: { name: 'venueName', address: 'venueAddress', city: 'venueCity', country: 'venueCountry' },
  presentWhen: 'name',
};

/** The tables of the events domain, as their services and `EventsReader` read them (their rows as the models). */
@Injectable()
export class EventTables {
  readonly organizers: EntityTable<Organizer>;
  readonly members: EntityTable<OrganizerMember>;
  readonly events: EntityTable<Event>;
  readonly ticketTypes: EntityTable<TicketType>;
  readonly registrations: EntityTable<Registration>;
  readonly attendees: EntityTable<Attendee>;

  constructor(@InjectDataSource() dataSource: DataSource) {
    const of = (entity: EntityTarget<unknown>) => dataSource.getMetadata(entity);
    this.organizers = new EntityTable(of(OrganizerEntity), 'o');
    this.members = new EntityTable(of(OrganizerMemberEntity), 'm');
    this.events = new EntityTable(of(EventEntity), 'e', VENUE);
    this.ticketTypes = new EntityTable(of(TicketTypeEntity), 't');
    this.registrations = new EntityTable(of(RegistrationEntity), 'r');
    this.attendees = new EntityTable(of(AttendeeEntity), 'a');
  }
}
