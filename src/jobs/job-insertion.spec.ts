import { jobInsertion } from './job-insertion.js';

// pg-boss 10's insertJob as `send` runs it, shortened to what jobInsertion rewrites.
const CAPTURED = {
  text: `
    INSERT INTO pgboss.job (id, name, data)
    SELECT id, j.name, data
    FROM
      ( SELECT
          COALESCE($1::uuid, gen_random_uuid()) as id,
          $2 as name,
          $3::jsonb as data,
          $4::int as retry_limit
      ) j JOIN pgboss.queue q ON j.name = q.name
    ON CONFLICT DO NOTHING
    RETURNING id
  `,
  values: [null, 'spec', {}, 2],
};

describe('jobInsertion', () => {
  it("puts the caller's data expression in place of the data parameter and numbers the others from the caller's first", () => {
    const { sql, values } = jobInsertion(CAPTURED, 7, 'SELECT $1::jsonb');
    expect(sql).toContain('(SELECT $1::jsonb)::jsonb as data');
    expect(sql).toContain('COALESCE($7::uuid');
    expect(sql).toContain('$8 as name');
    expect(sql).toContain('$9::int as retry_limit');
    expect(values).toEqual([null, 'spec', 2]);
  });

  it('inserts no job when the data comes out NULL (the change it follows wrote nothing)', () => {
    const { sql } = jobInsertion(CAPTURED, 1, 'NULL');
    expect(sql).toMatch(/\) j JOIN pgboss\.queue q ON j\.name = q\.name WHERE j\.data IS NOT NULL\s+ON CONFLICT DO NOTHING/);
  });

  it('refuses an insert it does not recognise', () => {
    expect(() => jobInsertion({ ...CAPTURED, text: CAPTURED.text.replace(' ON CONFLICT DO NOTHING', '') }, 1, 'NULL')).toThrow(
      /pg-boss 10/,
    );
  });
});
