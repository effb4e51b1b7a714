import { DomainError, failuresOf } from '../errors/domain-error.js';

/** A form field as text: '' when it is missing or not a single string. */
export function formText(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

/** A form field that may be sent once or several times (checkboxes), as a list of strings. */
export function formList(value: unknown): string[] {
  return (Array.isArray(value) ? value : value === undefined ? [] : [value]).filter((v): v is string => typeof v === 'string');
}

/** A date as pages show it: 2026-11-22, or an em dash for none. */
export function isoDay(date: Date | null): string {
  return date ? new Date(date).toISOString().slice(0, 10) : '—';
}

/**
 * Every invalid field of a domain error, keyed by field, for a form to show each beside its input.
 * Errors without a field are listed under `form`.
 */
export function fieldErrors(error: DomainError): Record<string, string> {
  const errors: Record<string, string> = {};
  for (const failure of failuresOf(error)) {
    const key = failure.field ?? 'form';
    errors[key] = errors[key] ? `${errors[key]} ${failure.message}` : failure.message;
  }
  return errors;
}
