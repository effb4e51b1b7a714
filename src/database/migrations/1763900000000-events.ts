import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The events domain: organizers and their members, events, ticket types, registrations and attendees.
 * Seat and ticket counters live on the event and ticket type rows, bounded by CHECK constraints, and
 * are only changed while the event row is locked, so capacity holds under any concurrency.
 */
export class Events1763900000000 implements MigrationInterface {
  name = 'Events1763900000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE organizers (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        slug text NOT NULL CONSTRAINT organizers_slug_key UNIQUE
          CONSTRAINT organizers_slug_check CHECK (slug ~ '^[a-z0-9]+(-[a-z0-9]+)*$' AND length(slug) <= 64),
        name text NOT NULL CONSTRAINT organizers_name_check CHECK (length(name) BETWEEN 1 AND 200),
        description text NOT NULL DEFAULT '' CONSTRAINT organizers_description_check CHECK (length(description) <= 5000),
        website_url text,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`
      CREATE TABLE organizer_members (
        organizer_id uuid NOT NULL CONSTRAINT organizer_members_organizer_id_fkey REFERENCES organizers (id) ON DELETE CASCADE,
        user_id uuid NOT NULL CONSTRAINT organizer_members_user_id_fkey REFERENCES users (id) ON DELETE CASCADE,
        role text NOT NULL CONSTRAINT organizer_members_role_check CHECK (role IN ('owner', 'admin', 'check_in_staff')),
        created_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT organizer_members_pkey PRIMARY KEY (organizer_id, user_id)
      )`);
    await q.query(`CREATE INDEX organizer_members_user_id_idx ON organizer_members (user_id, created_at)`);

    await q.query(`
      CREATE TABLE events (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        organizer_id uuid NOT NULL CONSTRAINT events_organizer_id_fkey REFERENCES organizers (id) ON DELETE CASCADE,
        slug text NOT NULL CONSTRAINT events_slug_key UNIQUE
          CONSTRAINT events_slug_check CHECK (slug ~ '^[a-z0-9]+(-[a-z0-9]+)*$' AND length(slug) <= 100),
        title text NOT NULL CONSTRAINT events_title_check CHECK (length(title) BETWEEN 1 AND 200),
        description text NOT NULL DEFAULT '' CONSTRAINT events_description_check CHECK (length(description) <= 20000),
        starts_at timestamptz NOT NULL,
        ends_at timestamptz NOT NULL,
        time_zone text NOT NULL,
        format text NOT NULL CONSTRAINT events_format_check CHECK (format IN ('in_person', 'online', 'hybrid')),
        venue_name text,
        venue_address text,
        venue_city text,
        venue_country text CONSTRAINT events_venue_country_check CHECK (venue_country ~ '^[A-Z]{2}$'),
        online_url text,
        capacity integer CONSTRAINT events_capacity_check CHECK (capacity > 0),
        confirmed_seats integer NOT NULL DEFAULT 0,
        status text NOT NULL DEFAULT 'draft' CONSTRAINT events_status_check CHECK (status IN ('draft', 'published', 'cancelled')),
        visibility text NOT NULL DEFAULT 'public'
          CONSTRAINT events_visibility_check CHECK (visibility IN ('public', 'unlisted', 'private')),
        published_at timestamptz,
        cancelled_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT events_time_range_check CHECK (ends_at > starts_at),
        CONSTRAINT events_confirmed_seats_check CHECK (confirmed_seats >= 0 AND (capacity IS NULL OR confirmed_seats <= capacity))
      )`);
    // The public listing walks this index in start order, whatever the size of the table.
    await q.query(`
      CREATE INDEX events_public_listing_idx ON events (starts_at, id) WHERE status = 'published' AND visibility = 'public'`);
    await q.query(`CREATE INDEX events_organizer_id_idx ON events (organizer_id, starts_at, id)`);

    await q.query(`
      CREATE TABLE ticket_types (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        event_id uuid NOT NULL CONSTRAINT ticket_types_event_id_fkey REFERENCES events (id) ON DELETE CASCADE,
        name text NOT NULL CONSTRAINT ticket_types_name_check CHECK (length(name) BETWEEN 1 AND 100),
        description text NOT NULL DEFAULT '' CONSTRAINT ticket_types_description_check CHECK (length(description) <= 2000),
        price_amount integer NOT NULL CONSTRAINT ticket_types_price_amount_check CHECK (price_amount >= 0),
        price_currency text NOT NULL CONSTRAINT ticket_types_price_currency_check CHECK (price_currency ~ '^[A-Z]{3}$'),
        quantity integer CONSTRAINT ticket_types_quantity_check CHECK (quantity > 0),
        sold integer NOT NULL DEFAULT 0,
        sales_start_at timestamptz,
        sales_end_at timestamptz,
        hidden boolean NOT NULL DEFAULT false,
        min_per_order integer NOT NULL DEFAULT 1,
        max_per_order integer NOT NULL DEFAULT 10,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT ticket_types_sold_check CHECK (sold >= 0 AND (quantity IS NULL OR sold <= quantity)),
        CONSTRAINT ticket_types_per_order_check CHECK (min_per_order >= 1 AND max_per_order >= min_per_order AND max_per_order <= 20),
        CONSTRAINT ticket_types_sales_window_check CHECK (sales_end_at IS NULL OR sales_start_at IS NULL OR sales_end_at > sales_start_at)
      )`);
    await q.query(`CREATE INDEX ticket_types_event_id_idx ON ticket_types (event_id, created_at, id)`);

    await q.query(`
      CREATE TABLE registrations (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        event_id uuid NOT NULL CONSTRAINT registrations_event_id_fkey REFERENCES events (id) ON DELETE CASCADE,
        ticket_type_id uuid NOT NULL CONSTRAINT registrations_ticket_type_id_fkey REFERENCES ticket_types (id) ON DELETE RESTRICT,
        user_id uuid NOT NULL CONSTRAINT registrations_user_id_fkey REFERENCES users (id) ON DELETE CASCADE,
        reference text NOT NULL CONSTRAINT registrations_reference_key UNIQUE,
        status text NOT NULL CONSTRAINT registrations_status_check CHECK (status IN ('confirmed', 'waitlisted', 'cancelled')),
        quantity integer NOT NULL CONSTRAINT registrations_quantity_check CHECK (quantity BETWEEN 1 AND 20),
        queue_position bigint GENERATED ALWAYS AS IDENTITY,
        created_at timestamptz NOT NULL DEFAULT now(),
        confirmed_at timestamptz,
        cancelled_at timestamptz,
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    // One active registration per person and event.
    await q.query(`
      CREATE UNIQUE INDEX registrations_one_active_per_user_idx ON registrations (event_id, user_id) WHERE status <> 'cancelled'`);
    // The waitlist, oldest first.
    await q.query(`CREATE INDEX registrations_waitlist_idx ON registrations (event_id, queue_position) WHERE status = 'waitlisted'`);
    await q.query(`CREATE INDEX registrations_event_id_idx ON registrations (event_id, created_at, id)`);
    await q.query(`CREATE INDEX registrations_user_id_idx ON registrations (user_id, created_at, id)`);
    await q.query(`CREATE INDEX registrations_ticket_type_id_idx ON registrations (ticket_type_id)`);

    await q.query(`
      CREATE TABLE attendees (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        registration_id uuid NOT NULL CONSTRAINT attendees_registration_id_fkey REFERENCES registrations (id) ON DELETE CASCADE,
        name text NOT NULL CONSTRAINT attendees_name_check CHECK (length(name) BETWEEN 1 AND 200),
        email text NOT NULL CONSTRAINT attendees_email_check CHECK (length(email) BETWEEN 3 AND 254 AND position('@' in email) > 1),
        position integer NOT NULL,
        checked_in_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT attendees_registration_position_key UNIQUE (registration_id, position)
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    for (const table of ['attendees', 'registrations', 'ticket_types', 'events', 'organizer_members', 'organizers']) {
      await q.query(`DROP TABLE ${table}`);
    }
  }
}
