/** An event's time as people read it: in the event's own zone, the zone named. */
export interface ShownTime {
  /** `Saturday, March 14, 2026, 7:00 – 10:00 PM` (both ends when it spans days). */
  range: string;
  /** `Central European Standard Time (Europe/Berlin)` */
  zone: string;
  /** `Sat, Mar 14, 7:00 PM`, for a subject line. */
  short: string;
}

export function showTime(startsAt: Date, endsAt: Date, timeZone: string, locale: string): ShownTime {
  const range = new Intl.DateTimeFormat(locale, {
    timeZone,
    weekday: 'long',
    year: 'numeric',
    month: 'long',
    day: 'numeric',
    hour: 'numeric',
    minute: '2-digit',
  }).formatRange(startsAt, endsAt);
  const zoneName = new Intl.DateTimeFormat(locale, { timeZone, timeZoneName: 'long' })
    .formatToParts(startsAt)
    .find((part) => part.type === 'timeZoneName')?.value;
  const short = new Intl.DateTimeFormat(locale, {
    timeZone,
    weekday: 'short',
    month: 'short',
    day: 'numeric',
    hour: 'numeric',
    minute: '2-digit',
  }).format(startsAt);
  return { range, zone: zoneName && zoneName !== timeZone ? `${zoneName} (${timeZone})` : timeZone, short };
}
