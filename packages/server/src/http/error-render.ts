/** Renders a ProtocolError as the body of its family (design.md "Error shapes"). */
import { STATUS_CODES } from 'node:http';
import { familyOf, InvalidInput, type ErrorFamily, type ProtocolError } from './errors.js';

/** The management family's 400 codes name the request part (invalid_body, invalid_query_string, invalid_uri). */
const MANAGEMENT_INPUT_CODES = {
  body: 'invalid_body',
  querystring: 'invalid_query_string',
  params: 'invalid_uri',
  headers: 'invalid_headers',
} as const;

/** Names of the /dbconnections family, e.g. `BadRequestError`. */
function errorName(statusCode: number): string {
  const text = (STATUS_CODES[statusCode] ?? 'Error').replace(/[^A-Za-z ]/g, '');
  return `${text.split(' ').map((w) => (w ? w[0]!.toUpperCase() + w.slice(1) : '')).join('')}Error`;
}

export function renderError(family: ErrorFamily, err: ProtocolError): Record<string, unknown> {
  switch (family) {
    case 'management':
      return {
        statusCode: err.statusCode,
        error: STATUS_CODES[err.statusCode] ?? 'Error',
        message: err.description,
        errorCode: err instanceof InvalidInput ? MANAGEMENT_INPUT_CODES[err.part] : err.code,
      };
    case 'dbconnections':
      return { name: errorName(err.statusCode), code: err.code, description: err.description, statusCode: err.statusCode };
    case 'oauth':
      return { error: err.code, error_description: err.description, ...err.fields };
  }
}

/**
 * The body of `err` for a request to `url`: the one place the shape is decided, by the path alone, whether the
 * error came from a route, the router, or Node's HTTP parser before any route was met (http/parser-errors.ts).
 */
export function renderErrorFor(url: string, err: ProtocolError): Record<string, unknown> {
  return renderError(familyOf(url), err);
}
