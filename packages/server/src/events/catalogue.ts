/**
 * The 22 event types of the contract (reference A.7) and a representative `data.object` for each, used by the
 * test-event operation when the caller sends no `data`. Shapes follow reference A.9.
 */
export const EVENT_TYPES = [
  'group.created',
  'group.deleted',
  'group.member.added',
  'group.member.deleted',
  'group.role.assigned',
  'group.role.deleted',
  'group.updated',
  'organization.connection.added',
  'organization.connection.removed',
  'organization.connection.updated',
  'organization.created',
  'organization.deleted',
  'organization.group.role.assigned',
  'organization.group.role.deleted',
  'organization.member.added',
  'organization.member.deleted',
  'organization.member.role.assigned',
  'organization.member.role.deleted',
  'organization.updated',
  'user.created',
  'user.deleted',
  'user.updated',
] as const;

export type EventType = (typeof EVENT_TYPES)[number];

const KNOWN: ReadonlySet<string> = new Set(EVENT_TYPES);

export function isEventType(value: string): value is EventType {
  return KNOWN.has(value);
}

// Fixed sample values: a test event should look the same every time it is sent.
const SAMPLE_TIME = '2026-01-01T00:00:00.000Z';
const SAMPLE_USER = {
  user_id: 'auth0|5f7c8ec7c33c6c004bbafe82',
  email: 'jane.doe@example.com',
  email_verified: false,
  name: 'Jane Doe',
  nickname: 'jane.doe',
  picture: 'https://example.com/jane.png',
  identities: [{ connection: 'Username-Password-Authentication', user_id: '5f7c8ec7c33c6c004bbafe82', provider: 'auth0', isSocial: false }],
  app_metadata: {},
  user_metadata: {},
  created_at: SAMPLE_TIME,
  updated_at: SAMPLE_TIME,
};
const SAMPLE_GROUP_REF = { id: 'grp_1a2b3c4d5e6f7g8h', type: 'tenant' };
const SAMPLE_GROUP = { ...SAMPLE_GROUP_REF, name: 'engineering', created_at: SAMPLE_TIME };
const SAMPLE_ROLE = { id: 'rol_1a2b3c4d5e6f7g8h', name: 'admin' };
const SAMPLE_ORGANIZATION = { id: 'org_1a2b3c4d5e6f7g8h', name: 'acme', display_name: 'Acme', metadata: {} };
const SAMPLE_ORGANIZATION_REF = { id: SAMPLE_ORGANIZATION.id, name: SAMPLE_ORGANIZATION.name };
const SAMPLE_CONNECTION_REF = { id: 'con_1a2b3c4d5e6f7g8h' };
const SAMPLE_MEMBER_USER = { user_id: SAMPLE_USER.user_id, email: SAMPLE_USER.email };

const SAMPLES: Record<EventType, Record<string, unknown>> = {
  'user.created': SAMPLE_USER,
  'user.updated': SAMPLE_USER,
  'user.deleted': { ...SAMPLE_USER, deleted_at: SAMPLE_TIME },
  'group.created': SAMPLE_GROUP,
  'group.updated': { ...SAMPLE_GROUP, updated_at: SAMPLE_TIME },
  'group.deleted': { ...SAMPLE_GROUP, updated_at: SAMPLE_TIME },
  'group.member.added': { group: SAMPLE_GROUP_REF, member: { member_type: 'user', id: SAMPLE_USER.user_id } },
  'group.member.deleted': { group: SAMPLE_GROUP_REF, member: { member_type: 'user', id: SAMPLE_USER.user_id } },
  'group.role.assigned': { group: SAMPLE_GROUP_REF, role: SAMPLE_ROLE, created_at: SAMPLE_TIME },
  'group.role.deleted': { group: SAMPLE_GROUP_REF, role: { id: SAMPLE_ROLE.id }, deleted_at: SAMPLE_TIME },
  'organization.created': SAMPLE_ORGANIZATION,
  'organization.updated': SAMPLE_ORGANIZATION,
  'organization.deleted': SAMPLE_ORGANIZATION,
  'organization.connection.added': {
    organization: SAMPLE_ORGANIZATION_REF,
    connection: SAMPLE_CONNECTION_REF,
    assign_membership_on_login: false,
    show_as_button: true,
    is_signup_enabled: false,
  },
  'organization.connection.updated': {
    organization: SAMPLE_ORGANIZATION_REF,
    connection: SAMPLE_CONNECTION_REF,
    assign_membership_on_login: true,
    show_as_button: true,
    is_signup_enabled: false,
  },
  'organization.connection.removed': { organization: SAMPLE_ORGANIZATION_REF, connection: SAMPLE_CONNECTION_REF },
  'organization.member.added': { organization: SAMPLE_ORGANIZATION_REF, user: SAMPLE_MEMBER_USER },
  'organization.member.deleted': { organization: SAMPLE_ORGANIZATION_REF, user: SAMPLE_MEMBER_USER },
  'organization.member.role.assigned': { organization: { id: SAMPLE_ORGANIZATION.id }, user: SAMPLE_MEMBER_USER, role: SAMPLE_ROLE },
  'organization.member.role.deleted': { organization: { id: SAMPLE_ORGANIZATION.id }, user: SAMPLE_MEMBER_USER, role: SAMPLE_ROLE },
  'organization.group.role.assigned': {
    organization: { id: SAMPLE_ORGANIZATION.id },
    role: SAMPLE_ROLE,
    group: SAMPLE_GROUP_REF,
    created_at: SAMPLE_TIME,
  },
  'organization.group.role.deleted': {
    organization: { id: SAMPLE_ORGANIZATION.id },
    role: { id: SAMPLE_ROLE.id },
    group: SAMPLE_GROUP_REF,
    deleted_at: SAMPLE_TIME,
  },
};

/** A representative `data.object` for test events of `type` (a fresh copy: callers may change it). */
export function sampleObject(type: EventType): Record<string, unknown> {
  return structuredClone(SAMPLES[type]);
}
