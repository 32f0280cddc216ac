/** The lab's namespace names: `<prefix><role>`, under a prefix that starts with "pb-". */
import type { LabProfile, LabRole } from './profiles/lab-profile.js';
import { ALL_ROLES } from './profiles/profile-by-name.js';

export const DEFAULT_PREFIX = 'pb-';
/** Namespace prefixes must start with "pb-" (project rule) and leave room for the role. */
export const PREFIX_RE = /^pb-[a-z0-9-]{0,6}$/;

/** Namespace name of a role under a prefix. */
export function nsName(prefix: string, role: LabRole): string {
  return `${prefix}${role}`;
}

/** The namespaces of a profile, or (without one) of every profile: what `down` may have to remove. */
export function allNamespaces(prefix: string, profile?: LabProfile): string[] {
  return (profile?.roles ?? ALL_ROLES).map((r) => nsName(prefix, r));
}
