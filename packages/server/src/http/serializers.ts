/**
 * How response bodies become JSON. A route's success schema serializes its body with fast-json-stringify (fast,
 * and it drops what the schema does not list), as Fastify does by default. Two kinds of declared responses are
 * sent with JSON.stringify instead, so that documenting them cannot change what is sent:
 *  - every status from 300 up (errors are rendered by http/error-handler.ts; redirects have no body);
 *  - success bodies marked with `asSent` (http/responses.ts), documented after the fact for handlers that
 *    build their body themselves.
 * Skipping their compilation also keeps start-up fast with a documented error set on every route.
 */
import { SerializerSelector } from '@fastify/fast-json-stringify-compiler';
import type { FastifyServerOptions } from 'fastify';
import { SENT_AS_IS } from './responses.js';
import { schemaCompilation } from './validators.js';

type SerializerFactory = NonNullable<NonNullable<NonNullable<FastifyServerOptions['schemaController']>['compilersFactory']>['buildSerializer']>;

export const buildSerializer: SerializerFactory = (externalSchemas, options) => {
  const compile = SerializerSelector()(externalSchemas, options as never);
  return (route) => {
    const schema = route.schema as Record<symbol, unknown> | undefined;
    if (Number(route.httpStatus) >= 300 || schema?.[SENT_AS_IS]) return JSON.stringify;
    // Compiled on the route's first response, not at start-up, for the reason validators.ts compiles lazily.
    if (schemaCompilation.atStartUp) return compile(route as never);
    let serialize: ((data: unknown) => string) | undefined;
    return (data: unknown) => (serialize ??= compile(route as never) as (data: unknown) => string)(data);
  };
};
