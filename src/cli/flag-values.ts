import { isScope, SCOPES } from '../auth/scopes.js';

/** Checks one flag's value before anything runs: the problem in words, or undefined when it is fine. */
export type ValueCheck = (value: string) => string | undefined;

const ISO_DATE = /^(\d{4})-(\d{2})-(\d{2})(?:T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,3})?)?(?:Z|[+-]\d{2}:\d{2}))?$/;

/** A calendar day (`2027-01-31`, midnight UTC) or an ISO 8601 date and time with its offset. */
export const isoDate: ValueCheck = (value) => {
  const match = ISO_DATE.exec(value);
  const [year, month, day] = (match?.slice(1, 4) ?? []).map(Number);
  // Date.parse would roll 2027-02-30 over to March: the day must exist in its month.
  const dayExists = match && month! >= 1 && month! <= 12 && day! >= 1 && day! <= new Date(Date.UTC(year!, month!, 0)).getUTCDate();
  return dayExists && !Number.isNaN(new Date(value).getTime())
    ? undefined
    : `"${value}" is not a date: give a day such as 2027-01-31, or a time such as 2027-01-31T18:00:00Z`;
};

/** Space-separated scope names, each one the service knows (which ones a command allows, the service decides). */
export const scopeList: ValueCheck = (value) => {
  const words = value.split(' ').filter(Boolean);
  const unknown = words.filter((word) => !isScope(word));
  if (words.length === 0) return 'give at least one scope';
  if (unknown.length > 0) {
    const names = unknown.map((s) => `"${s}"`).join(', ');
    return `unknown scope${unknown.length > 1 ? 's' : ''} ${names}; the scopes are ${Object.keys(SCOPES).join(', ')}`;
  }
  return undefined;
};

/** A whole number from `min` to `max`, written in digits. */
export function wholeNumber(min: number, max: number, unit: string): ValueCheck {
  return (value) => {
    const n = Number(value);
    return /^\d+$/.test(value) && n >= min && n <= max
      ? undefined
      : `must be a whole number of ${unit} from ${min} to ${max}, not "${value}"`;
  };
}

/** The name of a new migration file. */
export const migrationName: ValueCheck = (value) =>
  /^[a-z][a-z0-9-]*$/.test(value) ? undefined : `must be lowercase words joined by "-", such as add-events, not "${value}"`;

/** One of a few words. */
export function oneOf(choices: readonly string[]): ValueCheck {
  return (value) => (choices.includes(value) ? undefined : `must be ${choices.map((c) => `"${c}"`).join(' or ')}, not "${value}"`);
}

/** A UUID, as ids are written (`0b7c3f4e-6f0a-4c55-9a55-2b0f6d0f0d01`). */
export function uuid(what: string): ValueCheck {
  return (value) =>
    /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(value)
      ? undefined
      : `must be a ${what} (a UUID), not "${value}"`;
}
