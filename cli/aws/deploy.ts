/** `pathbench deploy [--testbed]`: the pipeline stack with cdk, saving its outputs for the other commands. */
import { errorMessage } from '../../functions/core/errors.js';
import { runCdk } from '../cdk.js';
import { PIPELINE_OUTPUTS_FILE } from '../outputs-file.js';
import { AwsCliError } from './errors.js';
import { DEFAULT_STACK } from './stack-config.js';

export interface DeployFlags {
  testbed?: boolean;
  yes?: boolean;
  stack?: string;
}

/** Deploy the testbed first when asked (stop if that fails), then the pipeline stack; resolves with cdk's exit code. */
export async function deploy(o: DeployFlags): Promise<number> {
  if (o.testbed) {
    let deployTestbed: ((opts: { yes?: boolean }) => Promise<number>) | undefined;
    try {
      ({ deployTestbed } = await import('../commands/testbed.js'));
    } catch (e) {
      throw new AwsCliError(`--testbed is not available: cli/commands/testbed.ts failed to load (${errorMessage(e)})`);
    }
    const code = await deployTestbed({ yes: o.yes });
    if (code !== 0) return code;
  }
  return runCdk([
    'deploy',
    o.stack ?? DEFAULT_STACK,
    '--outputs-file',
    PIPELINE_OUTPUTS_FILE,
    ...(o.yes ? ['--require-approval', 'never'] : []),
  ]);
}
