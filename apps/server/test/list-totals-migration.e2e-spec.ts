import { Student as StudentEntity } from '../src/students/student.entity';
import { demoStudents } from '../src/testing';
import { migratedUpTo } from './support/empty-database';
import { DATABASE_KIND } from './support/server';

/** The tallies' migration on a database that already holds data: it counts the rows there. */
describe('the list tallies migration on an existing database', () => {
  it('counts the rows already there, keeps counting after, and drops cleanly', async () => {
    const orgs = ['org_01JTALL1ESM1GRAT10N00000001', 'org_01JTALL1ESM1GRAT10N00000002'];
    const { insert, migrate, undo, drop } = await migratedUpTo('ListTallies1766500000000', orgs);
    const now = new Date();
    const statuses = ['active', 'active', 'inactive', 'graduated', 'withdrawn'] as const;
    const students = demoStudents(orgs[0]!, 50, now.getTime()).map((s, i) => ({
      ...s,
      status: statuses[i % statuses.length]!,
    }));
    await insert(StudentEntity, students);
    await insert(StudentEntity, demoStudents(orgs[1]!, 7, now.getTime()));
    const after = await migrate();
    try {
      const tallies = async () => {
        const rows: { organization_id: string; field: string; value: string; n: string }[] =
          await after.query(
            `SELECT organization_id, field, value, n FROM list_tallies WHERE collection = 'students' AND n <> 0`,
          );
        return Object.fromEntries(
          rows.map((r) => [
            `${r.organization_id === orgs[0] ? 'a' : 'b'} ${r.field}=${r.value}`,
            Number(r.n),
          ]),
        );
      };
      const counted = await tallies();
      // The other organization's seven (random statuses) are its own, one per status value.
      const other = Object.entries(counted).filter(([key]) => key.startsWith('b status='));
      expect(
        Object.fromEntries(Object.entries(counted).filter(([key]) => key.startsWith('a '))),
      ).toEqual({
        'a =': 50,
        'a status=active': 20,
        'a status=inactive': 10,
        'a status=graduated': 10,
        'a status=withdrawn': 10,
      });
      expect(counted['b =']).toBe(7);
      expect(other.reduce((sum, [, n]) => sum + n, 0)).toBe(7);
      // From here on the triggers keep them.
      await after.query(
        `DELETE FROM students WHERE id = '${students[0]!.id}' OR id = '${students[2]!.id}'`,
      );
      const later = await tallies();
      expect(later['a =']).toBe(48);
      expect(later['a status=active']).toBe(19);
      expect(later['a status=inactive']).toBe(9);

      await undo(after);
      const left: unknown[] = await after.query(
        DATABASE_KIND === 'postgres'
          ? `SELECT 1 FROM pg_tables WHERE tablename = 'list_tallies'`
          : `SELECT 1 FROM sqlite_master WHERE name LIKE 'list_tallies%'`,
      );
      expect(left).toEqual([]);
      // The students are untouched, and writable without the triggers.
      await after.query(`DELETE FROM students WHERE id = '${students[1]!.id}'`);
    } finally {
      await after.destroy();
      await drop();
    }
  });
});
