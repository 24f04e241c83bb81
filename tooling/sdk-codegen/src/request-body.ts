/** What an operation's request body is, read from the OpenAPI document. */

export type Json = Record<string, unknown>;

export const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** A body of one file part (`multipart/form-data` with a binary `file`). */
export function isUpload(requestBody: unknown): boolean {
  if (!isObject(requestBody) || !isObject(requestBody.content)) return false;
  const media = requestBody.content['multipart/form-data'];
  if (!isObject(media) || !isObject(media.schema)) return false;
  const properties = media.schema.properties;
  return isObject(properties) && isObject(properties.file) && properties.file.format === 'binary';
}

export function bodySchema(requestBody: unknown): Json | undefined {
  if (!isObject(requestBody) || !isObject(requestBody.content)) return undefined;
  const media = requestBody.content['application/json'];
  return isObject(media) && isObject(media.schema) ? media.schema : undefined;
}
