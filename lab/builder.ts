/**
 * What every step of `labUp` shares: the lab being built (prefix, state directory, profile),
 * its state (saved after every change, so a crash can be cleaned up) and the tracked
 * background processes it starts inside the namespaces.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { type LabState, writeState } from './lab-state.js';
import { nsName } from './namespace-names.js';
import type { LabProfile, LabRole } from './profiles/lab-profile.js';
import { type LabProcess, spawnInNamespace, stopProcess } from './sys.js';
import type { Argv } from './topology-commands.js';

export class LabBuilder {
  constructor(
    readonly prefix: string,
    readonly dir: string,
    readonly profile: LabProfile,
    readonly state: LabState,
    readonly log: (line: string) => void,
  ) {}

  ns(role: LabRole): string {
    return nsName(this.prefix, role);
  }

  save(): void {
    writeState(this.dir, this.state);
  }

  /** Start `argv` in `ns` as a tracked background process (recorded in the state at once). */
  spawn(role: string, ns: string, argv: Argv): LabProcess {
    const logs = join(this.dir, 'logs');
    mkdirSync(logs, { recursive: true });
    const p = spawnInNamespace(role, ns, argv, join(logs, `${ns}-${role.replace(/[^a-z0-9-]/gi, '_')}.log`));
    this.state.processes.push(p);
    this.save();
    return p;
  }

  /** Stop every tracked process of `role` and drop it from the state. */
  async stopRole(role: string): Promise<void> {
    const keep: LabProcess[] = [];
    for (const p of this.state.processes) {
      if (p.role === role) await stopProcess(p);
      else keep.push(p);
    }
    this.state.processes = keep;
    this.save();
  }
}
