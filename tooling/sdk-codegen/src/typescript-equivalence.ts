import type { SdkModel } from './model';
import { HEADER, queryTypeName, quote } from './typescript-text';

/**
 * For every model and operation, a check that the generated type and the type the contract
 * infers accept the same values (each assignable to the other). Checked by the client's
 * `tsc --noEmit`; a contract change that the generated files do not follow fails it.
 */
export function emitEquivalence(model: SdkModel): string {
  let out = `${HEADER}`;
  out += `import type * as C from '@platform/contract';\n`;
  out += `import type { Check, ContractQuery, ContractRequest, ContractResponse, Same } from '../contract-types.test-d';\n`;
  out += `import type * as G from './types';\n`;
  out += `import type { UploadBody } from '../route-types';\n\n`;
  out += 'type Routes = C.Contract;\nexport type Checks = [\n';
  for (const op of model.operations) {
    const [resource, method] = op.id.split('.') as [string, string];
    const route = `Routes[${quote(resource)}][${quote(method)}]`;
    const label = (what: string) => `  // ${op.id}: ${what}\n`;
    out += label('response');
    const generated =
      op.response.kind === 'none'
        ? op.response.file
          ? 'string'
          : 'undefined'
        : `G.${op.response.model}`;
    out += `  Check<Same<ContractResponse<${route}>, ${generated}>>,\n`;
    if (op.query.length > 0) {
      out += label('query');
      out += `  Check<Same<ContractQuery<${route}>, G.${queryTypeName(op)}>>,\n`;
    }
    if (op.body) {
      out += label('body');
      out += `  Check<Same<ContractRequest<${route}>['body'], G.${op.body.model}${op.body.required ? '' : ' | undefined'}>>,\n`;
    }
    if (op.upload) {
      out += label('body');
      // ts-rest also takes FormData for a multipart body; the SDK builds that itself.
      out += `  Check<Same<Exclude<ContractRequest<${route}>['body'], FormData>, UploadBody>>,\n`;
    }
  }
  for (const event of model.events) {
    out += `  // event ${event.type}\n`;
    out += `  Check<Same<C.EventOf<${quote(event.type)}>, G.${event.model}>>,\n`;
  }
  return `${out}];\n`;
}
