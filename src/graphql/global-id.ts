import { isUuid } from '../database/uuid.js';

/** Types whose objects `Query.node` can fetch. */
export type NodeType = 'Organizer' | 'Event' | 'TicketType' | 'Registration' | 'Attendee';
const NODE_TYPES: ReadonlySet<string> = new Set<NodeType>(['Organizer', 'Event', 'TicketType', 'Registration', 'Attendee']);

/**
 * Opaque global IDs: the type name and the row's uuid, base64url-encoded, so an ID names its type and
 * clients do not build IDs themselves.
 */
export function toGlobalId(type: NodeType, id: string): string {
  return Buffer.from(`${type}:${id}`, 'utf8').toString('base64url');
}

/** The type and uuid of a global ID, or null when it is not one of ours. */
export function fromGlobalId(globalId: string): { type: NodeType; id: string } | null {
  if (globalId.length > 100 || !/^[A-Za-z0-9_-]+$/.test(globalId)) return null;
  const [type, id, ...rest] = Buffer.from(globalId, 'base64url').toString('utf8').split(':');
  if (rest.length || !type || !id || !NODE_TYPES.has(type) || !isUuid(id)) return null;
  return { type: type as NodeType, id: id.toLowerCase() };
}

/** The uuid of a global ID of the given type, or null. */
export function idOfType(globalId: string, type: NodeType): string | null {
  const decoded = fromGlobalId(globalId);
  return decoded?.type === type ? decoded.id : null;
}
