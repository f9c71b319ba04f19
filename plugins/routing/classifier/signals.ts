/**
 * Language-neutral signals: source code, SQL, formulas, spreadsheet formulas and markup look the
 * same in a prompt written in any language. Each one found adds a few English hint words to the
 * text the encoder reads, so a Spanish SQL question carries "sql database query" just as an
 * English one does, and routes whose texts show the same signal get the same hint.
 */

interface Signal {
  hint: string;
  test: RegExp;
}

const SIGNALS: Signal[] = [
  { hint: 'programming source code', test: /(?:^|\n)[ \t]{0,3}(?:`{3}|~{3})|\b(?:def|class|function|return|import|const|var|let|fn|func|public|static|void|async|await|lambda)\b[^\n]{0,40}[({:=]|=>|#include\b|\b\w+\.\w+\([^)]*\)|\b(?:Traceback|Exception|TypeError|NullPointerException|segfault|stack trace)\b/ },
  { hint: 'sql database query', test: /\bselect\b[\s\S]{1,200}?\bfrom\b|\binsert\s+into\b|\bupdate\s+\w+\s+set\b|\bcreate\s+(?:table|index)\b|\bgroup\s+by\b|\b(?:left|inner|outer)\s+join\b|\bsql\b/i },
  { hint: 'math equation calculation', test: /\d\s*[a-z]\s*[+\-*/^=]|[a-z]\^\d|[=<>]\s*-?\d+(?:\.\d+)?\s*$|[∫∑√π≤≥±∞]|\b(?:sin|cos|tan|log|ln|lim|dx|dy)\b\s*\(?/im },
  { hint: 'spreadsheet formula', test: /=\s*(?:SUM|SUMIF|SUMIFS|VLOOKUP|XLOOKUP|HLOOKUP|IF|IFS|COUNTIF|COUNTIFS|INDEX|MATCH|AVERAGE|FILTER)\s*\(/i },
  { hint: 'html markup', test: /<\/?[a-z][\w-]*(?:\s[^<>]{0,200})?>|\{\s*"[\w-]+"\s*:/i },
];

/** The hint words of every signal the text shows (an empty string when none). */
export function signalHints(text: string): string {
  let hints = '';
  for (const s of SIGNALS) if (s.test.test(text)) hints += ` ${s.hint}`;
  return hints;
}
