/** Fixed ids of demo data, so the docs (docs/operations.md) and tests can name them. */
export const DEMO_ORGANIZATION_ID = 'org_01JC0DEM0RG000000000000000';
export const DEMO_ORGANIZATION_NAME = 'Demo School';
export const DEMO_STUDENT_IDS = [
  'stu_01JC0DEMST1000000000000000',
  'stu_01JC0DEMST2000000000000000',
  'stu_01JC0DEMST3000000000000000',
] as const;

/** Three courses of the catalog: a current one, the archived one and one that starts soon. */
export const DEMO_COURSE_IDS = {
  /** MATH-101 Algebra I: current term, has a capacity. */
  math101: 'crs_01JC0DEMCR1000000000000000',
  /** LAT-101 Latin I: last year, archived (takes no new enrollments). */
  lat101: 'crs_01JC0DEMCR2000000000000000',
  /** CS-150 Programming Fundamentals: starts next month, has a capacity. */
  cs150: 'crs_01JC0DEMCR3000000000000000',
} as const;

/** The exams of MATH-101 (midterm held last week, final still ahead) and LAT-101's final. */
export const DEMO_EXAM_IDS = {
  math101Midterm: 'exm_01JC0DEMEX1000000000000000',
  math101Final: 'exm_01JC0DEMEX2000000000000000',
  lat101Final: 'exm_01JC0DEMEX3000000000000000',
} as const;

/** The first demo student's (DEMO_STUDENT_IDS[0]) enrollments, payments and results. */
export const DEMO_ENROLLMENT_IDS = {
  math101Active: 'enr_01JC0DEMEN1000000000000000',
  lat101Completed: 'enr_01JC0DEMEN2000000000000000',
  cs150Pending: 'enr_01JC0DEMEN3000000000000000',
} as const;

export const DEMO_PAYMENT_IDS = {
  /** MATH-101 tuition, succeeded (refundable). */
  math101Succeeded: 'pay_01JC0DEMPA1000000000000000',
  /** LAT-101 tuition, succeeded and then partly refunded. */
  lat101PartlyRefunded: 'pay_01JC0DEMPA2000000000000000',
  /** CS-150 tuition, pending (can succeed or fail). */
  cs150Pending: 'pay_01JC0DEMPA3000000000000000',
} as const;

export const DEMO_EXAM_RESULT_IDS = {
  /** MATH-101 midterm, a draft (can be published). */
  math101MidtermDraft: 'res_01JC0DEMRS1000000000000000',
  /** LAT-101 final, published. */
  lat101FinalPublished: 'res_01JC0DEMRS2000000000000000',
} as const;

export const DEV_TOKEN_NAME = 'pnpm dev';
