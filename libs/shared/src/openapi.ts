import type { z } from 'zod';

/** OpenAPI content of a JSON body, a request's or a response's. */
export const jsonContent = (schema: z.ZodTypeAny) => ({
  content: { 'application/json': { schema } },
});

/** What a GET that answers 200 with a JSON document registers, beyond its place and its names. */
export interface ReadOperation {
  path: string;
  summary: string;
  tag: string;
  operationId: string;
  description?: string;
  params?: z.AnyZodObject;
  query?: z.AnyZodObject;
  /** The 200 answer: its description and its schema. */
  answer: [description: string, schema: z.ZodTypeAny];
}

/**
 * The OpenAPI registration (zod-to-openapi's RouteConfig) of a read: GET `path` with its path
 * parameters and query, answered 200 with a JSON document. Errors are the document's common ones.
 */
export function readOperation(op: ReadOperation) {
  const [answer, schema] = op.answer;
  return {
    method: 'get' as const,
    path: op.path,
    summary: op.summary,
    tags: [op.tag],
    operationId: op.operationId,
    ...(op.description !== undefined && { description: op.description }),
    ...((op.params ?? op.query) && {
      request: {
        ...(op.params && { params: op.params }),
        ...(op.query && { query: op.query }),
      },
    }),
    responses: { 200: { description: answer, ...jsonContent(schema) } },
  };
}
