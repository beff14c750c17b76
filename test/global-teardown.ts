import pg from 'pg';

export default async function globalTeardown(): Promise<void> {
  const serverUrl = process.env.DATABASE_URL;
  const template = process.env.CARDWORK_TEST_TEMPLATE;
  if (!serverUrl || !template || !/test/.test(template)) return;
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  try {
    await client.query(`DROP DATABASE IF EXISTS "${template}" WITH (FORCE)`);
  } finally {
    await client.end();
  }
}
