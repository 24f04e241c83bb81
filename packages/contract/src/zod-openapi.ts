// Adds `.openapi()` to zod schemas so schemas can carry a title, examples and formats
// into the generated OpenAPI document.
import { extendZodWithOpenApi } from '@anatine/zod-openapi';
import { z } from 'zod';

extendZodWithOpenApi(z);

export { z };
