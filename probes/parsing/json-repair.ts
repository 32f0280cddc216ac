/**
 * A JSON document cut off part-way (a killed tool, an upload in pieces) → the longest prefix that
 * ends right after a complete value at most `maxDepth` containers deep (after its closing
 * bracket, or before the comma that follows it), closed with the brackets still open. Used for iperf3's `-J` output (keeps every complete interval) and `agent.json`
 * (keeps every complete probe entry). Hand-written: no JSON-repair library is installed, and
 * this needs only a string-aware bracket scan (~30 lines), not general repair.
 */

/** Returns the repaired JSON text, or undefined when not even one complete value is there. */
export function closeTruncatedJson(text: string, maxDepth = 2): string | undefined {
  const open = text.indexOf('{');
  if (open < 0) return undefined;
  const stack: string[] = [];
  let inString = false;
  let escaped = false;
  let cut = -1;
  let cutStack: string[] = [];
  for (let i = open; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (escaped) escaped = false;
      else if (c === '\\') escaped = true;
      else if (c === '"') inString = false;
      continue;
    }
    if (c === '"') inString = true;
    else if (c === ',' && stack.length <= maxDepth) {
      // Everything before a comma at this depth is complete members / elements.
      cut = i;
      cutStack = [...stack];
    } else if (c === '{' || c === '[') stack.push(c === '{' ? '}' : ']');
    else if (c === '}' || c === ']') {
      if (stack.pop() !== c) return undefined;
      if (stack.length === 0) return text.slice(open, i + 1);
      if (stack.length <= maxDepth) {
        cut = i + 1;
        cutStack = [...stack];
      }
    }
  }
  if (cut < 0) return undefined;
  return text.slice(open, cut) + cutStack.reverse().join('');
}
