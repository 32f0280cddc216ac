/** Whether the lab can run on this machine at all. */
import { tryRun } from './sys.js';

/** Whether the lab can run here: root, iproute2 present, network namespaces usable. */
export async function labAvailable(): Promise<{ ok: boolean; reason?: string }> {
  if (process.platform !== 'linux') return { ok: false, reason: 'the lab needs Linux network namespaces' };
  if (typeof process.getuid === 'function' && process.getuid() !== 0)
    return { ok: false, reason: 'the lab needs root (network namespaces, iptables, tc)' };
  if (!(await tryRun(['ip', '-V']))) return { ok: false, reason: 'iproute2 (`ip`) is not installed' };
  if (!(await tryRun(['ip', 'netns', 'list']))) return { ok: false, reason: '`ip netns` does not work here' };
  return { ok: true };
}
