import type { PersonalAccessToken } from '../../auth/personal-access-token.entity';
import { toTokenResource } from '../../auth/tokens.service';

/** The API's view of a token, with its organization (the CLI spans organizations). */
export function tokenView(record: PersonalAccessToken) {
  return { ...toTokenResource(record), organization_id: record.organizationId };
}
