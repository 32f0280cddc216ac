/**
 * The stack outputs `cdk deploy --outputs-file` saves (`{ "<stack>": { "<output>": "<value>" } }`):
 * the pipeline's in .pathbench/aws-outputs.json, the testbed's in .pathbench/testbed-outputs.json.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { errorMessage } from '../core/errors.js';
import { checkDocument } from '../core/stored-document.js';
import { ROOT } from './cli-root.js';

/** Stack name → output name → value (CloudFormation outputs are strings). */
export const outputsSchema = z.record(z.string(), z.record(z.string(), z.string()));
export type Outputs = z.output<typeof outputsSchema>;

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
 * @throws OutputsFileError when the file cannot be read, is not JSON or not of that shape.
 */
export async function readOutputsFile(file: string): Promise<Outputs> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (e: unknown) {
    throw new OutputsFileError(`cannot read outputs file ${file} (${errorMessage(e).replace(/, \w+ '.*'$/, '')})`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (e: unknown) {
    throw new OutputsFileError(`outputs file ${file} is not valid JSON (${errorMessage(e)})`);
  }
  try {
    return checkDocument(file, json, outputsSchema, 'outputs file ({ "<stack>": { "<output>": "<value>" } })');
  } catch (e: unknown) {
    throw new OutputsFileError(errorMessage(e));
  }
}
