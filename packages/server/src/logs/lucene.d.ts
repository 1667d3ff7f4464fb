/** The parts of `lucene` (PEG.js query-string parser; ships no types) that logs/query.ts reads. */
declare module 'lucene' {
  export interface LuceneTerm {
    field: string;
    term: string;
    quoted: boolean;
    regex?: boolean;
    prefix?: string | null;
    similarity?: number | null;
    proximity?: number | null;
    boost?: number | null;
  }
  export interface LuceneRange {
    field: string;
    term_min: string;
    term_max: string;
    inclusive: 'both' | 'none' | 'left' | 'right';
  }
  export interface LuceneNode {
    left?: LuceneAst;
    operator?: string;
    right?: LuceneAst;
    start?: string;
    parenthesized?: boolean;
    field?: string;
  }
  export type LuceneAst = LuceneNode | LuceneTerm | LuceneRange;
  export function parse(query: string): LuceneNode;
}
