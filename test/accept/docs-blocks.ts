/**
 * The command blocks of README.md and docs/*.md: every fenced ```sh block, with the reason it is
 * not run when an HTML comment `<!-- not run: REASON -->` stands on the line before it.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

export interface DocBlock {
  /** The document, relative to the repository root. */
  doc: string;
  /** 1-based line of the opening fence. */
  line: number;
  /** The block's commands: its lines without comments and blank lines. */
  commands: string[];
  /** Why the block is not run (its marker), if it is marked. */
  notRun?: string;
}

/** A doc line as a command: the trailing `# comment` removed, whitespace trimmed. */
export function commandOf(line: string): string {
  return line.replace(/\s+#\s.*$/, '').trim();
}

export function docBlocks(root: string, doc: string): DocBlock[] {
  const lines = readFileSync(join(root, doc), 'utf8').split('\n');
  const blocks: DocBlock[] = [];
  let open: DocBlock | undefined;
  let fenced = false;
  lines.forEach((l, i) => {
    if (!l.startsWith('```')) {
      if (open && !l.trim().startsWith('#') && commandOf(l)) open.commands.push(commandOf(l));
      return;
    }
    if (fenced) {
      if (open) blocks.push(open);
      open = undefined;
      fenced = false;
      return;
    }
    fenced = true;
    if (l.trim() !== '```sh') return;
    const marker = /^<!--\s*not run:\s*(.+?)\s*-->\s*$/.exec(lines[i - 1] ?? '');
    open = { doc, line: i + 1, commands: [], ...(marker ? { notRun: marker[1] } : {}) };
  });
  return blocks;
}
