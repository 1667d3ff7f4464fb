/** The Management API, from /openapi.json: every operation, type confusion on every body, hostile ids and queries. */
import fc from 'fast-check';
import type { Family, FuzzRequest } from './family.js';
import { operationsOf, requestFor, runRequest } from './openapi-operations.js';

export const management: Family<FuzzRequest> = {
  name: 'management',
  summary: 'every /api/v2 operation of the document; bodies valid or type-confused, hostile ids and query values',
  arbitrary: (context) => {
    const operations = operationsOf(context, (template) => template.startsWith('/api/v2/'));
    const auth = { authorization: `Bearer ${context.token}` };
    return fc.constantFrom(...operations).chain((operation) => requestFor(context, operation, auth));
  },
  run: runRequest,
};
