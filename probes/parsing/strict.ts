/**
 * The strict whole-text form of a parser, for callers that want all or nothing (the CLI's
 * `parse`, the agent's self-calibration, benches): every record, or a ParseError with the first
 * rejection (or truncation). CollectOutput uses the lenient, streaming FileParse instead.
 */
import { ParseError } from '../../core/errors.js';
import { parseText } from './file-parse.js';
import type { LineParserFactory, Parser } from './parser-types.js';

export function strictParser(kind: string, factory: LineParserFactory): Parser {
  const jsonl = kind === 'tcp-connect' || kind === 'http';
  return (raw, meta) => {
    const { records, stats } = parseText(kind, factory, raw, meta);
    if (stats.firstRejection) throw new ParseError(stats.firstRejection);
    if (stats.truncation && records.length === 0) throw new ParseError(stats.truncation);
    if (stats.truncation && jsonl) throw new ParseError(stats.truncation);
    if (records.length === 0) throw new ParseError(`${kind}: no ${jsonl ? 'JSON lines' : 'records'} in input`);
    return records;
  };
}
