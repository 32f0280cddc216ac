/**
 * The stack outputs `cdk deploy --outputs-file` saves (`{ "<stack>": { "<output>": "<value>" } }`):
 * the pipeline's in .pathbench/aws-outputs.json, the testbed's in .pathbench/testbed-outputs.json.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { errorMessage } from '../core/errors.js';
import { ROOT } from './cli-root.js';

export type Outputs = Record<string, Record<string, string>>;

/** Where `pathbench deploy` saves the pipeline stack's outputs. */
export const PIPELINE_OUTPUTS_FILE = path.join(ROOT, '.pathbench', 'aws-outputs.json');
/** Where `pathbench deploy --testbed` saves the testbed stacks' outputs (relative to the repository root). */
export const TESTBED_OUTPUTS_FILE = '.pathbench/testbed-outputs.json';

/** An outputs file that cannot be read or is not a JSON object; printed as one line, exit code 2. */
export class OutputsFileError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'OutputsFileError';
  }
}

/**
 * Read a `cdk deploy --outputs-file` JSON.
 * @throws OutputsFileError when the file cannot be read or is not a JSON object.
 */
export async function readOutputsFile(file: string): Promise<Outputs> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (e: unknown) {
    throw new OutputsFileError(`cannot read outputs file ${file} (${errorMessage(e).replace(/, \w+ '.*'$/, '')})`);
  }
  try {
    const json: unknown = JSON.parse(text);
    if (typeof json !== 'object' || json === null || Array.isArray(json)) throw new Error('expected an object');
    return json as Outputs;
  } catch (e: unknown) {
    throw new OutputsFileError(`outputs file ${file} is not valid JSON (${errorMessage(e)})`);
  }
}
