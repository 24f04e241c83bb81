import { ZipFile } from 'yazl';

/**
 * OneRoster CSV bundles for tests, written with each file's columns as the standard lists them
 * (OneRoster 1.2 CSV binding; `users.csv` also as 1.1 had it), a row's missing cells empty.
 */
export const ONEROSTER_COLUMNS = {
  'orgs.csv': 'sourcedId,status,dateLastModified,name,type,identifier,parentSourcedId',
  'academicSessions.csv':
    'sourcedId,status,dateLastModified,title,type,startDate,endDate,parentSourcedId,schoolYear',
  'courses.csv':
    'sourcedId,status,dateLastModified,schoolYearSourcedId,title,courseCode,grades,orgSourcedId,subjects,subjectCodes',
  'classes.csv':
    'sourcedId,status,dateLastModified,title,grades,courseSourcedId,classCode,classType,location,schoolSourcedId,termSourcedIds,subjects,subjectCodes,periods',
  'users.csv':
    'sourcedId,status,dateLastModified,enabledUser,username,userIds,givenName,familyName,middleName,identifier,email,sms,phone,agentSourcedIds,grades,password,userMasterIdentifier,resourceSourcedIds,preferredGivenName,preferredMiddleName,preferredFamilyName,primaryOrgSourcedId,pronouns',
  'roles.csv':
    'sourcedId,status,dateLastModified,userSourcedId,roleType,role,beginDate,endDate,orgSourcedId,userProfileSourcedId',
  'enrollments.csv':
    'sourcedId,status,dateLastModified,classSourcedId,schoolSourcedId,userSourcedId,role,primary,beginDate,endDate',
  'demographics.csv':
    'sourcedId,status,dateLastModified,birthDate,sex,americanIndianOrAlaskaNative,asian,blackOrAfricanAmerican,nativeHawaiianOrOtherPacificIslander,white,demographicRaceTwoOrMoreRaces,hispanicOrLatinoEthnicity,countryOfBirthCode,stateOfBirthAbbreviation,cityOfBirth,publicSchoolResidenceStatus',
} as const;

/** `users.csv` as OneRoster 1.1 had it: a `role` column, no `preferredGivenName`. */
export const ONEROSTER_1_1_USERS =
  'sourcedId,status,dateLastModified,enabledUser,orgSourcedIds,role,username,userIds,givenName,familyName,middleName,identifier,email,sms,phone,agentSourcedIds,grades,password';

export type OneRosterRow = Record<string, string>;

export interface BundleSpec {
  version?: string;
  /** Each file's processing in the manifest; a file here with rows is put in the zip. */
  processing: Partial<Record<keyof typeof ONEROSTER_COLUMNS, 'bulk' | 'delta' | 'absent'>>;
  files: Partial<Record<keyof typeof ONEROSTER_COLUMNS, OneRosterRow[]>>;
  /** A file's header instead of the standard's (a 1.1 `users.csv`). */
  headers?: Partial<Record<keyof typeof ONEROSTER_COLUMNS, string>>;
  /** Leave `manifest.csv` out. */
  noManifest?: boolean;
  /** Files under this folder in the zip. */
  folder?: string;
}

function cell(value: string): string {
  return /[",\n\r]/.test(value) ? `"${value.replace(/"/g, '""')}"` : value;
}

/** A file's CSV text: the header, then each row's cells in the header's order. */
export function oneRosterCsv(header: string, rows: readonly OneRosterRow[]): string {
  const columns = header.split(',');
  const lines = rows.map((row) => columns.map((c) => cell(row[c] ?? '')).join(','));
  return [header, ...lines].join('\r\n') + '\r\n';
}

/** The bundle as zip bytes. */
export async function oneRosterBundle(spec: BundleSpec): Promise<Uint8Array> {
  const zip = new ZipFile();
  const at = (name: string) => (spec.folder ? `${spec.folder}/${name}` : name);
  const names = Object.keys(ONEROSTER_COLUMNS).map((file) => file.replace(/\.csv$/, ''));
  if (!spec.noManifest) {
    const manifest = [
      { propertyName: 'manifest.version', value: '1.0' },
      { propertyName: 'oneroster.version', value: spec.version ?? '1.2' },
      ...names.map((name) => ({
        propertyName: `file.${name}`,
        value: spec.processing[`${name}.csv` as keyof typeof ONEROSTER_COLUMNS] ?? 'absent',
      })),
      { propertyName: 'source.systemName', value: 'Test SIS' },
      { propertyName: 'source.systemCode', value: 'test' },
    ];
    zip.addBuffer(Buffer.from(oneRosterCsv('propertyName,value', manifest)), at('manifest.csv'));
  }
  for (const [file, rows] of Object.entries(spec.files)) {
    const name = file as keyof typeof ONEROSTER_COLUMNS;
    const header = spec.headers?.[name] ?? ONEROSTER_COLUMNS[name];
    zip.addBuffer(Buffer.from(oneRosterCsv(header, rows)), at(file));
  }
  zip.end();
  const chunks: Buffer[] = [];
  for await (const chunk of zip.outputStream as AsyncIterable<Buffer>) chunks.push(chunk);
  return new Uint8Array(Buffer.concat(chunks));
}
