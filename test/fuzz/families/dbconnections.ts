/** /dbconnections/signup and /change_password, from the document: their family's error shape, always. */
import fc from 'fast-check';
import type { Family, FuzzRequest } from './family.js';
import { operationsOf, requestFor, runRequest, withRealValues } from './openapi-operations.js';

export const dbconnections: Family<FuzzRequest> = {
  name: 'dbconnections',
  summary: '/dbconnections/* bodies from the document, valid or type-confused, from allowed and foreign origins',
  arbitrary: (context) => {
    const operations = operationsOf(context, (template) => template.startsWith('/dbconnections/'));
    const requests = fc
      .tuple(fc.constantFrom(...operations), fc.constantFrom('https://app.example', 'https://evil.example', undefined))
      .chain(([operation, origin]) => requestFor(context, operation, origin ? { origin } : {}));
    return withRealValues(requests, { client_id: context.clientId, connection: 'Username-Password-Authentication' });
  },
  run: runRequest,
};
