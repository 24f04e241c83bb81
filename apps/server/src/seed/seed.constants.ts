/** Fixed ids of demo data, so the README, the docs and tests can name them. */
export const DEMO_ORGANIZATION_ID = 'org_01JC0DEM0RG000000000000000';
export const DEMO_ORGANIZATION_NAME = 'Demo School';
export const DEMO_STUDENT_IDS = [
  'stu_01JC0DEMST1000000000000000',
  'stu_01JC0DEMST2000000000000000',
  'stu_01JC0DEMST3000000000000000',
] as const;
export const DEV_TOKEN_NAME = 'pnpm dev';
