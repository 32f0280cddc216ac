/** The lab profiles by name, and the roles any of them uses. */
import { LAB_PROFILES, type LabProfile, type LabRole } from './lab-profile.js';
import { meshProfile } from './mesh-profile.js';
import { oneWayProfile } from './one-way-profile.js';
import { seed000NlbProfile, seed000Profile } from './seed-000-profile.js';
import { seed002Profile } from './seed-002-profile.js';
import { seed004Profile } from './seed-004-profile.js';

/** The profile by name; throws a one-line error for an unknown one. */
export function labProfile(name: string = 'seed-000'): LabProfile {
  if (name === 'seed-000') return seed000Profile();
  if (name === 'seed-000-nlb') return seed000NlbProfile();
  if (name === 'seed-002') return seed002Profile();
  if (name === 'seed-004') return seed004Profile();
  if (name === 'mesh') return meshProfile();
  if (name === 'one-way') return oneWayProfile();
  throw new Error(`unknown lab profile "${name}" (known: ${LAB_PROFILES.join(', ')})`);
}

/** Every role any profile uses (for `down` and `status`, which may not know the profile). */
export const ALL_ROLES: readonly LabRole[] = [...new Set(LAB_PROFILES.flatMap((n) => labProfile(n).roles))];
