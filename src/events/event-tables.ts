import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityMetadata, EntityTarget } from 'typeorm';
import { AttendeeEntity } from './attendee.entity.js';
import { EventEntity } from './event.entity.js';
import type { Attendee, Event, Organizer, OrganizerMember, Registration, TicketType, Venue } from './events.model.js';
import { OrganizerMemberEntity } from './organizer-member.entity.js';
import { OrganizerEntity } from './organizer.entity.js';
import { RegistrationEntity } from './registration.entity.js';
import { TicketTypeEntity } from './ticket-type.entity.js';

type Row = Record<string, unknown>;

/** One column as the services read it: its name in SQL, its property in the model, and how its value converts. */
export interface ColumnMapping {
  column: string;
  property: string;
  convert: ((value: unknown) => unknown) | null;
}

/** Several columns read as one nested object of the model (the event's venue), null when `presentWhen` is null. */
interface Nested {
  property: string;
  fields: Record<string, string>;
  presentWhen: string;
}

// pg returns bigint and numeric as strings: the models hold numbers, as they always did.
const NUMERIC = new Set(['int', 'int2', 'int4', 'int8', 'integer', 'smallint', 'bigint', 'numeric', 'decimal', 'real', 'float4', 'float8']);
const toNumber = (v: unknown): number => Number(v);
const toNumberOrNull = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));

/**
 * A table of the events domain as its SQL reads it: the select list and the row mapper both come from
 * the entity's TypeORM metadata, computed once, so a stored field is declared in one place (the entity).
 */
export class Table<T> {
  /** The qualified select list (`e.id, e.organizer_id, …`): every column of the entity, under the table's alias. */
  readonly select: string;
  readonly columns: readonly ColumnMapping[];
  /** A row selected with `select` (or RETURNING it) as the model. */
  readonly map: (row: Row) => T;

  constructor(
    metadata: EntityMetadata,
    /** The alias every statement gives the table (`events e`). */
    readonly alias: string,
    nested?: Nested,
  ) {
    const all = metadata.columns.map((c): ColumnMapping => {
      const type = typeof c.type === 'string' ? c.type : c.type === Number ? 'numeric' : '';
      const convert = NUMERIC.has(type) ? (c.isNullable ? toNumberOrNull : toNumber) : null;
      return { column: c.databaseName, property: c.propertyName, convert };
    });
    this.select = all.map((c) => `${alias}.${c.column}`).join(', ');
    this.columns = all;
    this.map = compileMapper<T>(all, nested);
  }
}

/**
 * The row mapper of a table, compiled once at start-up into a function that returns one object literal
 * (`{ "id": row["id"], "startsAt": row["starts_at"], … }`), as graphql-jit compiles queries: every model
 * of a table gets the same shape, built without a loop. A loop of keyed stores cost about 1 µs a row and
 * left every read of a model field slower; a page of 50 events with its ticket types paid that ~100 times.
 * The names in the generated code come from the entities' decorators (never from input), each written
 * as a JSON string literal.
 */
function compileMapper<T>(all: readonly ColumnMapping[], nested?: Nested): (row: Row) => T {
  const converters: ((value: unknown) => unknown)[] = [];
  const read = (c: ColumnMapping) => {
    const value = `row[${JSON.stringify(c.column)}]`;
    if (c.convert === null) return value;
    converters.push(c.convert);
    return `convert[${converters.length - 1}](${value})`;
  };
  const columnOf = (property: string) => {
    const found = all.find((c) => c.property === property);
    if (!found) throw new Error(`No column for ${property}`);
    return found.column;
  };
  const nestedColumns = new Set(nested ? Object.values(nested.fields).map(columnOf) : []);
  const fields = all.filter((c) => !nestedColumns.has(c.column)).map((c) => `${JSON.stringify(c.property)}: ${read(c)}`);
  if (nested) {
    const present = `row[${JSON.stringify(columnOf(nested.fields[nested.presentWhen]!))}]`;
    const inner = Object.entries(nested.fields).map(
      ([field, property]) => `${JSON.stringify(field)}: row[${JSON.stringify(columnOf(property))}] ?? null`,
    );
    fields.push(`${JSON.stringify(nested.property)}: ${present} == null ? null : { ${inner.join(', ')} }`);
  }
  const mapper = new Function('row', 'convert', `return { ${fields.join(', ')} };`) as (row: Row, convert: typeof converters) => T;
  return (row) => mapper(row, converters);
}

/** The venue of an event: the venue_* columns, read as one object. */
const VENUE: Nested & { fields: Record<keyof Venue, string> } = {
  property: 'venue',
  fields: { name: 'venueName', address: 'venueAddress', city: 'venueCity', country: 'venueCountry' },
  presentWhen: 'name',
};

/** The tables of the events domain, as their services and `EventsReader` read them. */
@Injectable()
export class EventTables {
  readonly organizers: Table<Organizer>;
  readonly members: Table<OrganizerMember>;
  readonly events: Table<Event>;
  readonly ticketTypes: Table<TicketType>;
  readonly registrations: Table<Registration>;
  readonly attendees: Table<Attendee>;

  constructor(@InjectDataSource() dataSource: DataSource) {
    const of = (entity: EntityTarget<unknown>) => dataSource.getMetadata(entity);
    this.organizers = new Table(of(OrganizerEntity), 'o');
    this.members = new Table(of(OrganizerMemberEntity), 'm');
    this.events = new Table(of(EventEntity), 'e', VENUE);
    this.ticketTypes = new Table(of(TicketTypeEntity), 't');
    this.registrations = new Table(of(RegistrationEntity), 'r');
    this.attendees = new Table(of(AttendeeEntity), 'a');
  }
}
