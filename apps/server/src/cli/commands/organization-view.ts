import { toIso } from '../../common/timestamp';
import type { Organization } from '../../organizations/organization.entity';
import type { OrganizationsService } from '../../organizations/organizations.service';

/** An organization as the operator commands print it. */
export function organizationView(organizations: OrganizationsService, org: Organization) {
  return {
    id: org.id,
    object: 'organization',
    name: org.name,
    plan: org.plan,
    rate_limit_per_minute: organizations.rateLimitOf(org),
    created_at: toIso(org.createdAt),
    updated_at: toIso(org.updatedAt),
  };
}

export function describeOrganization(view: ReturnType<typeof organizationView>): string {
  return `${view.id}  ${view.name}  ${view.plan}  ${view.rate_limit_per_minute} requests/min`;
}
