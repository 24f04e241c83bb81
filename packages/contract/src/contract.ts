import { initContract } from '@ts-rest/core';
import { coursesContract } from './courses';
import { enrollmentsContract } from './enrollments';
import { eventsContract } from './events';
import { examResultsContract, examsContract } from './exams';
import { paymentsContract } from './payments';
import { studentsContract } from './students';

const c = initContract();

/** The whole public API. Server handlers, the SDK and the OpenAPI document all derive from it. */
export const contract = c.router(
  {
    students: studentsContract,
    courses: coursesContract,
    enrollments: enrollmentsContract,
    payments: paymentsContract,
    exams: examsContract,
    examResults: examResultsContract,
    events: eventsContract,
  },
  { strictStatusCodes: true },
);

export type Contract = typeof contract;
