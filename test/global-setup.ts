// Runs outside jest's module system, so it imports no project source: it only
// names this run's template database; the first test file that needs it
// creates and migrates it (test/support/test-db.ts).
export default async function globalSetup(): Promise<void> {
  if (!process.env.DATABASE_URL) return;
  process.env.CARDWORK_TEST_TEMPLATE = `cardwork_test_tpl_${process.pid}_${Date.now()}`;
}
