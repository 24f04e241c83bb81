import { ProblemException } from '../common/problem.exception';

/** 409 for an action that sends to an endpoint that is disabled. */
export function endpointDisabled(id: string): ProblemException {
  return new ProblemException(
    'conflict',
    `Webhook endpoint ${id} is disabled; enable it (PATCH with "enabled": true) first`,
  );
}
