import { initContract } from '@ts-rest/core';
import { studentsContract } from './students';

const c = initContract();

/** The whole public API. Server handlers, the SDK and the OpenAPI document all derive from it. */
export const contract = c.router(
  {
    students: studentsContract,
  },
  { strictStatusCodes: true },
);

export type Contract = typeof contract;
