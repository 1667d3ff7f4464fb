/**
 * The name and nickname a user is shown with when its profile sets none, derived as the reference derives
 * them; shown by the Management API (management/user-view.ts) and searched by (store/user-search-terms.ts).
 */
import type { User } from './users.js';

export function displayName(user: User): string {
  return user.profile.name ?? user.email ?? user.phone_number ?? user.username ?? user.user_id;
}

export function displayNickname(user: User): string {
  return user.profile.nickname ?? (user.email ? user.email.split('@')[0]! : (user.username ?? user.phone_number ?? ''));
}
